"""Simulated messages that leak their instructions or speak in the other side's role.

`instructions`: the message repeats `RUN` words of its prompt's fixed wording, or opens with a
speaker name ("User:"). `supporter-role`: a classifier fitted on the real conversations, the
person's messages against the other side's, flags a message that reads more like the other side
than all but `FALSE_SHARE` of the person's own (scored out of fold), so a simulator as like the
people as they are to themselves is flagged about that often (`expected_false_share`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from attunebench.data.schema import Conversation
from attunebench.prompts import PromptTemplate
from attunebench.simulators import classifier
from attunebench.simulators.authenticity import usable
from attunebench.simulators.records import Written
from attunebench.simulators.schema import Flagged, Leaks
from attunebench.tasks.helpers.history import history_before
from attunebench.tasks.helpers.prompting import SPEAKER_NAMES

RUN = 6  # words in a row shared with the instructions: more than a phrase people also use
FALSE_SHARE = 0.01
EXAMPLES = 5
_WORD = re.compile(r"[a-z0-9']+")
_PLACEHOLDER = re.compile(r"\$[a-z_]+")


def _runs(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + RUN]) for i in range(len(words) - RUN + 1)}


def instruction_runs(templates: Sequence[PromptTemplate]) -> dict[str, set[tuple[str, ...]]]:
    """Each prompt's runs of words, its fixed wording only (what it quotes is data)."""
    return {t.id: _runs(_PLACEHOLDER.sub(" ", f"{t.system}\n{t.user}")) for t in templates}


def echoes(message: Written, runs: dict[str, set[tuple[str, ...]]]) -> bool:
    text = (message.text or "").strip()
    speaker = any(text.startswith(f"{name}:") for name in SPEAKER_NAMES.values())
    return speaker or bool(_runs(text) & runs.get(message.prompt_id, set()))


def _sides(conversations: Sequence[Conversation]) -> tuple[list[str], list[int], list[str]]:
    """Every real message: its text, 1 (the other side's) or 0 (the person's), its conversation."""
    texts, labels, ids = [], [], []
    for conversation in conversations:
        last = conversation.turns[-1].index + 1
        for said in history_before(conversation, last):
            texts.append(said.text)
            labels.append(int(said.speaker == "assistant"))
            ids.append(conversation.id)
    return texts, labels, ids


def role_flags(
    messages: Sequence[Written], conversations: Sequence[Conversation]
) -> list[bool] | None:
    """Whether each message reads as the other side's (see the module docstring); None where
    the real messages leave nothing to fit."""
    texts, labels, ids = _sides(conversations)
    own = classifier.cross_fitted(texts, labels, ids) if texts else None
    if own is None:
        return None
    person = own[np.asarray(labels) == 0]
    threshold = max(0.5, float(np.quantile(person, 1.0 - FALSE_SHARE)))
    scored = classifier.scores(
        classifier.fitted_on(texts, labels), [m.text or "" for m in messages]
    )
    return [bool(score > threshold) for score in scored]


def leaks(
    messages: Sequence[Written],
    conversations: Sequence[Conversation],
    templates: Sequence[PromptTemplate],
) -> Leaks:
    """Every simulated message checked for both leaks (see the module docstring)."""
    written = usable(messages)
    if not written:
        return Leaks(reason="the simulator wrote no message")
    runs = instruction_runs(templates)
    echoed = [echoes(m, runs) for m in written]
    where = {m.conversation_id for m in written}
    checked = classifier.available()
    roles = role_flags(written, [c for c in conversations if c.id in where]) if checked else None
    if roles is None:
        roles = [False] * len(written)
    flagged = [
        Flagged(
            conversation_id=m.conversation_id,
            turn_index=m.turn_index,
            rollout=m.rollout,
            why="instructions" if echo else "supporter-role",
            text=m.text or "",
        )
        for m, echo, role in zip(written, echoed, roles, strict=True)
        if echo or role
    ]
    return Leaks(
        messages=len(written),
        instructions=sum(echoed),
        supporter_role=sum(roles),
        expected_false_share=FALSE_SHARE,
        examples=flagged[:EXAMPLES],
        reason=None if checked else f"the supporter role is not checked: {classifier.NEEDS}",
    )
