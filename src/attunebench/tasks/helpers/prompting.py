"""Rendering items into prompts: transcripts, self-reports, label menus, chat messages, and the
choice form of a question.

Blind and informed prompts differ by one block, `self_reports`, which says who gave the labels
it quotes. The templates put what every item of a conversation shares first and the item's own
part last, so a server's prefix cache serves the prompt of turn t+1 from that of turn t.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

from attunebench.answerform import TaskHint
from attunebench.data.schema import PROVENANCES, Conversation, TaxonomyLabel
from attunebench.models.base import GenerateParams, Message
from attunebench.prompts import defang, delimit
from attunebench.records import PromptInfo
from attunebench.tasks.base import ChoiceForm, Item, Query
from attunebench.tasks.helpers import history
from attunebench.tasks.helpers.wording import words

REPLY_PARAMS = GenerateParams(temperature=0.0, max_tokens=400)
SPEAKER_NAMES = {"user": words("speaker_user"), "assistant": words("speaker_assistant")}
# Who gave a state's labels, as the informed prompt says it (Source.provenance of `state`).
# A source that does not say is never worded as the user's own report: the report calls it
# "undeclared", and so does the prompt.
UNDECLARED = "undeclared"
REPORTERS = {
    given: words("reporter_" + given.replace("-", "_")) for given in (*PROVENANCES, UNDECLARED)
}
# Option keys of a choice question: single characters, one token in every common tokenizer.
LETTERS = tuple(string.ascii_uppercase + string.ascii_lowercase)


def transcript(utterances: Sequence[history.Utterance], assistant: str | None = None) -> str:
    """The conversation quoted as data, one line per message (`assistant` names the other side
    where it is a person, say). No turn numbers: a model could answer by position."""
    names = SPEAKER_NAMES if assistant is None else {**SPEAKER_NAMES, "assistant": assistant}
    lines = [f"{names[u.speaker]}: {u.text.strip()}" for u in utterances]
    return delimit("conversation", "\n".join(lines) or words("nothing_said"))


def quoted_start(text: str, words: int = 8) -> str:
    """The first words of a message, to point at it without a turn number."""
    parts = text.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def reporter(conversation: Conversation) -> str:
    """Who gave this conversation's state labels, in words (its source's provenance)."""
    given = conversation.source.provenance.get("state", UNDECLARED)
    return REPORTERS.get(given, REPORTERS[UNDECLARED])


def self_reports_block(
    mode: history.ContextMode,
    reports: Sequence[history.SelfReport],
    conversation: Conversation,
    situation: str | None = None,
) -> str:
    """Informed: the earlier reported states (saying who gave them) and any situation the
    user described beforehand; empty in blind mode."""
    if mode == "blind":
        return ""
    lines = [
        words(
            "report_line",
            start=defang(quoted_start(report.said)),
            state=history.describe_state(report.state),
        )
        for report in reports
    ]
    body = "\n".join(lines) or words("no_reports_yet")
    block = words("reported_by", reporter=reporter(conversation)) + "\n"
    block += delimit("self_reports", body)
    if situation:
        block = words("situation") + "\n" + delimit("situation", situation) + "\n" + block
    return block + "\n"


def shown_fields(
    item: Item[Any],
    said: Sequence[history.Utterance],
    before: int,
    *,
    assistant: str | None = None,
    situation: str | None = None,
) -> dict[str, str]:
    """A task prompt's `conversation` (what was `said`) and `self_reports` (those before turn
    `before`, in the item's context mode)."""
    conversation = item.conversation
    reports = history.self_reports_before(conversation, before)
    return {
        "conversation": transcript(said, assistant),
        "self_reports": self_reports_block(item.context, reports, conversation, situation),
    }


def option_keys(options: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Each option's key in a choice question, by its label: letters in order, or the options
    themselves where they are single digits.

    >>> option_keys([("yes", "Yes"), ("no", "No")])
    {'yes': 'A', 'no': 'B'}
    """
    digits = all(label.isdigit() and len(label) == 1 for label, _ in options)
    if not digits and len(options) > len(LETTERS):
        raise ValueError(f"a choice question takes at most {len(LETTERS)} options")
    keys = [label for label, _ in options] if digits else LETTERS[: len(options)]
    return {label: key for (label, _), key in zip(options, keys, strict=True)}


def choice_form(
    messages: Sequence[Message], question: str, options: Sequence[tuple[str, str]]
) -> ChoiceForm:
    """The question with its (label, shown text) options as single-character keys, ending
    with "Answer: (" so the key is the very next token (after a space, many tokenizers would
    first predict the space)."""
    keys = tuple(option_keys(options).values())
    menu = "\n".join(f"({key}) {shown}" for key, (_, shown) in zip(keys, options, strict=True))
    kind = "number" if keys[0].isdigit() else "letter"
    tail = f"{question}\n{menu}\n{words('choice_tail_' + kind)}\n{words('answer_opening')}"
    last = messages[-1]
    asked = (*messages[:-1], Message(last.role, f"{last.content}\n\n{tail}"))
    return ChoiceForm(asked, keys, tuple(label for label, _ in options))


def choice_query(
    key: str,
    messages: list[Message],
    prompt: PromptInfo,
    hint: TaskHint,
    question: str,
    options: Sequence[tuple[str, str]],
) -> Query:
    """A query asking `question` after `messages` in choice form (`choice_form`)."""
    form = choice_form(messages, question, options)
    return Query(key, messages, prompt, hint=hint, choice=form)


def label_menu(labels: Sequence[TaxonomyLabel]) -> str:
    return "\n".join(f"- {label.name}: {label.description}" for label in labels)


def chat_messages(
    system: str, utterances: Sequence[history.Utterance], *, note: str = ""
) -> list[Message]:
    """A chat for a model that writes the next reply, in strictly alternating turns: chat
    templates (Gemma's) refuse an assistant opening or a repeated role. A `note` goes after the
    user's last message, so the prefix stays the same from turn to turn for a prefix cache."""
    said = list(utterances)
    if not said or said[-1].speaker != "user":
        raise ValueError("a chat for the next reply must end with the user's message")
    head = system.strip()
    if said[0].speaker == "assistant":
        head += f"\n\n{words('opened_with')}\n" + defang(said[0].text.strip())
        said = said[1:]
    messages = [Message("system", head)]
    for utterance in said:
        if len(messages) > 1 and messages[-1].role == utterance.speaker:
            joined = messages[-1].content + "\n\n" + utterance.text.strip()
            messages[-1] = Message(utterance.speaker, joined)
        else:
            messages.append(Message(utterance.speaker, utterance.text.strip()))
    if note:
        messages[-1] = Message("user", messages[-1].content + "\n\n" + note.strip())
    return messages
