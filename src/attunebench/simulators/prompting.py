"""What a simulated user is told (prompting.toml), and the questions it is asked.

A replay asks a task's own question in the person's role (`engine.person`, whose frame,
`PERSONA`, is pinned here); the realism simulations ask `questions`, in generate form and,
where the answer is one of a few options, in choice form too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

from attunebench.answerform import AnswerForm, TaskHint
from attunebench.engine.person import PERSONA
from attunebench.models.base import GenerateParams
from attunebench.prompts import PromptTemplate, load_prompt
from attunebench.records import PromptInfo
from attunebench.simulators.forms import MESSAGE_FORM
from attunebench.tasks.base import Query
from attunebench.tasks.helpers.history import Utterance, hint_history
from attunebench.tasks.helpers.prompting import choice_form, transcript

CONTINUE = load_prompt(__name__, "simulated-next-message")
LABEL = load_prompt(__name__, "simulated-label")
SEEKER = load_prompt(__name__, "simulated-seeker")
SEEKER_AFTER = load_prompt(__name__, "simulated-seeker-after")
SUPPORTER = load_prompt(__name__, "simulated-seeker-supporter")
GRADE = load_prompt(__name__, "simulated-grade")
TEMPLATES = (PERSONA, CONTINUE, LABEL, SEEKER, SEEKER_AFTER, SUPPORTER, GRADE)
# A message is a few sentences; a budget this size cuts off a runaway one, not a real one.
MESSAGE_PARAMS = GenerateParams(temperature=0.0, max_tokens=120)


def prompts_digest(prompts: Sequence[PromptInfo] = ()) -> str:
    """One digest of the simulator's prompts and of the task prompts a replay wraps."""
    every = sorted({(p.id, p.version) for p in (*(t.info for t in TEMPLATES), *prompts)})
    return hashlib.sha256(json.dumps(every).encode()).hexdigest()[:12]


def written(template: PromptTemplate, said: Sequence[Utterance], **fields: str) -> Query:
    """A question whose answer is the next message (plain text), after the conversation `said`."""
    hint = TaskHint(history=hint_history(said), form=MESSAGE_FORM)
    messages = template.render(**fields, conversation=transcript(said))
    return Query("message", messages, template.info, MESSAGE_PARAMS, hint)


def chosen(
    template: PromptTemplate,
    said: Sequence[Utterance],
    fields: Mapping[str, str],
    form: AnswerForm,
    options: Sequence[tuple[str, str]],
    labels: tuple[str, ...] = (),
    **wording: str,
) -> Query:
    """A question about the conversation `said` with a JSON answer of `form`'s (its hint
    carrying `labels`), and its choice form over `options` ((label, text) pairs), from a
    template's `question` and `answer_form` texts."""
    shown = {**fields, "conversation": transcript(said)}
    question = template.text("question", **wording)
    asked = template.render(
        **shown, question=question, answer_form=template.text("answer_form", **wording)
    )
    base = template.render(**shown, question="", answer_form="")
    choice = choice_form(base, question, options) if options else None
    hint = TaskHint(labels=labels, form=form)
    return Query("answer", asked, template.info, hint=hint, choice=choice)
