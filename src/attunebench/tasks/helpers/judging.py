"""Asking a judge: what it is told about the participant, and the queries it answers.

The judge sees the conversation, the participant's profile (how they felt, what would help;
their post-hoc comment only where asked, as it can name a reply) and the candidates. A rubric
judge also sees the replies the participant preferred and rejected; a pairwise judge does not,
since one of its candidates is always such a reference and being told so would decide for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from attunebench.answerform import AnswerForm, TaskHint
from attunebench.data.schema import Conversation, Response, State, Turn
from attunebench.judge.forms import PAIRWISE_ANSWERS, RUBRIC_ANSWERS
from attunebench.models.base import GenerateParams
from attunebench.prompts import delimit
from attunebench.tasks.base import Query
from attunebench.tasks.helpers.history import (
    describe_state,
    hint_history,
    history_before,
    history_through,
    turn_at,
)
from attunebench.tasks.helpers.prompting import choice_form, reporter, transcript
from attunebench.tasks.helpers.wording import task_prompt, words

PAIRWISE = task_prompt(__name__, "judge-pairwise")
RUBRIC = task_prompt(__name__, "judge-rubric")
PAIRWISE_CHOICE = task_prompt(__name__, "judge-pairwise-choice")
JUDGE_PARAMS = GenerateParams(temperature=0.0, max_tokens=300, json_mode=True)
VerdictMode = Literal["pairwise", "rubric"]


@dataclass(frozen=True, slots=True)
class Profile:
    """What the participant told us about one turn."""

    state: State | None = None
    reporter: str = ""
    need: str | None = None
    need_behaviors: tuple[str, ...] = ()
    comment: str | None = None  # post-hoc, after the replies: shown only when asked for
    chosen: str | None = None
    rejected: str | None = None


def profile_of(
    conversation: Conversation,
    turn: Turn,
    references: tuple[Response, Response] | None = None,
    *,
    comment: bool = False,
) -> Profile:
    need, preference = turn.need, turn.preference
    return Profile(
        state=turn.state,
        reporter=reporter(conversation),
        need=need.text if need else None,
        need_behaviors=need.behaviors if need else (),
        comment=preference.comment if comment and preference else None,
        chosen=references[0].text if references else None,
        rejected=references[1].text if references else None,
    )


def participant_block(profile: Profile, *, references: bool) -> str:
    """The profile as the judge reads it; the reference replies only if `references`."""
    facts = []
    if profile.state is not None:
        state = describe_state(profile.state)
        facts.append(words("told_felt", reporter=profile.reporter, state=state))
    if profile.need:
        facts.append(words("told_need", need=profile.need))
    if profile.need_behaviors:
        facts.append(words("told_wanted", behaviors=", ".join(profile.need_behaviors)))
    if profile.comment:
        facts.append(words("told_comment", comment=profile.comment))
    parts = [
        words("participant_told_us"),
        delimit("participant", "\n".join(facts) or words("nothing_told")),
    ]
    if references and profile.chosen:
        parts += [words("preferred_reply"), delimit("preferred_reply", profile.chosen)]
    if references and profile.rejected:
        parts += [words("rejected_reply"), delimit("rejected_reply", profile.rejected)]
    return "\n".join(parts) + "\n"


@dataclass(frozen=True, slots=True)
class JudgeContext:
    """Everything about an item a judge query needs, rendered once."""

    conversation: str
    history: tuple[tuple[str, str], ...]
    user_text: str
    profile: Profile

    @classmethod
    def at(cls, conversation: Conversation, turn_index: int, profile: Profile) -> JudgeContext:
        return cls(
            conversation=transcript(history_through(conversation, turn_index)),
            history=hint_history(history_before(conversation, turn_index)),
            user_text=turn_at(conversation, turn_index).user,
            profile=profile,
        )

    def hint(self, form: AnswerForm, candidates: dict[str, str], *, references: bool) -> TaskHint:
        """What a proxy judge reads, on the same footing as the prompt."""
        reference = {"wanted": self.profile.need}
        if references:
            reference.update(chosen=self.profile.chosen, rejected=self.profile.rejected)
        return TaskHint(
            kind=form.kind,
            text=self.user_text,
            candidates=candidates,
            history=self.history,
            reference={key: value for key, value in reference.items() if value},
            form=form,
        )


def pairwise_query(
    context: JudgeContext, a: str, b: str, key: str, *, judge: str | None = None
) -> Query:
    """Which of A and B this participant would have found better (`judge` None: the
    evaluated model is the judge, as in the judge audit)."""
    fields = {
        "conversation": context.conversation,
        "participant": participant_block(context.profile, references=False),
        "reply_a": delimit("reply_a", a),
        "reply_b": delimit("reply_b", b),
    }
    hint = context.hint(PAIRWISE_ANSWERS, {"A": a, "B": b}, references=False)
    base = PAIRWISE_CHOICE.render(**fields)
    options = [("A", words("reply_a")), ("B", words("reply_b"))]
    form = choice_form(base, words("judge_question"), options)
    return Query(
        key,
        PAIRWISE.render(**fields),
        PAIRWISE.info,
        JUDGE_PARAMS,
        hint,
        role="judge",
        model=judge,
        choice=form,
    )


def rubric_query(
    context: JudgeContext,
    reply: str,
    key: str,
    *,
    judge: str | None,
    form: AnswerForm = RUBRIC_ANSWERS,
) -> Query:
    """An absolute 1-10 score of one reply for this participant (`judge` None: the evaluated
    model is the judge, as in `judge_thumbs`)."""
    messages = RUBRIC.render(
        conversation=context.conversation,
        participant=participant_block(context.profile, references=True),
        reply=delimit("reply", reply),
    )
    hint = context.hint(form, {"A": reply}, references=True)
    return Query(key, messages, RUBRIC.info, JUDGE_PARAMS, hint, role="judge", model=judge)


def verdict_mode(query: Query) -> VerdictMode:
    return (
        "pairwise"
        if query.hint is not None and query.hint.kind == PAIRWISE_ANSWERS.kind
        else "rubric"
    )
