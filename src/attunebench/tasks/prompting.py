"""Rendering items into prompts: transcripts, self-reports, label menus, chat messages.

Every task prompt is a template in `tasks/prompts/*.toml` (see `judge.templates`); this module
turns an item's conversation into the quoted blocks those templates take. Blind and informed
prompts differ by exactly one block, `self_reports`, which is empty in blind mode.

The templates put what every item of a conversation shares first (instructions and label
menu in the system message, then the conversation in order) and the item's own part last, and
the self-reports go after the conversation: the prompt of turn t+1 then begins with all of the
prompt of turn t up to the end of its conversation, which a server's prefix cache serves.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from attunebench.data.schema import TaxonomyLabel
from attunebench.judge.templates import PromptTemplate, defang, delimit, load_prompts
from attunebench.models.base import Message
from attunebench.tasks.history import ContextMode, SelfReport, Utterance, describe_state

SPEAKER_NAMES = {"user": "User", "assistant": "Assistant"}
NO_REPORTS_YET = "(none yet: nothing was reported before this point)"


@cache
def task_prompts() -> dict[str, PromptTemplate]:
    return load_prompts("attunebench.tasks")


def task_prompt(prompt_id: str) -> PromptTemplate:
    try:
        return task_prompts()[prompt_id]
    except KeyError:
        raise KeyError(f"no task prompt {prompt_id!r} (known: {sorted(task_prompts())})") from None


def transcript(utterances: Sequence[Utterance]) -> str:
    """The conversation quoted as data, one line per message, labelled with its turn."""
    lines = [
        f"[{turn_label(u.turn_index)}] {SPEAKER_NAMES[u.speaker]}: {u.text.strip()}"
        for u in utterances
    ]
    return delimit("conversation", "\n".join(lines) or "(nothing was said before this)")


def turn_label(turn_index: int | None) -> str:
    """Turns as people count them (from 1); the opening comes before the first."""
    return "opening" if turn_index is None else f"turn {turn_index + 1}"


def self_reports_block(mode: ContextMode, reports: Sequence[SelfReport]) -> str:
    """Empty in blind mode; in informed mode, the participant's earlier self-reports."""
    if mode == "blind":
        return ""
    lines = [
        f"- at their message in {turn_label(report.turn_index)}: {describe_state(report.state)}"
        for report in reports
    ]
    body = "\n".join(lines) or NO_REPORTS_YET
    return (
        "Earlier in this conversation the user told us how they felt, in their own words:\n"
        + delimit("self_reports", body)
        + "\n"
    )


def label_menu(labels: Sequence[TaxonomyLabel]) -> str:
    return "\n".join(f"- {label.name}: {label.description}" for label in labels)


def chat_messages(system: str, utterances: Sequence[Utterance], *, note: str = "") -> list[Message]:
    """A chat for a model that writes the next reply: system, then strictly alternating turns.

    Chat templates (Gemma's among them) refuse a conversation that opens with the assistant or
    repeats a role, so an assistant opening moves into the system message and consecutive
    messages of one speaker are joined. A `note` (the informed mode's self-reports) goes after
    the user's last message rather than into the system message: the system message and the
    conversation before it then stay the same from turn to turn and a prefix cache serves them.
    """
    said = list(utterances)
    if not said or said[-1].speaker != "user":
        raise ValueError("a chat for the next reply must end with the user's message")
    head = system.strip()
    if said[0].speaker == "assistant":
        head += "\n\nThe conversation opened with you saying:\n" + defang(said[0].text.strip())
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
