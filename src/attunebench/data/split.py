"""A single-file corpus split into train and test, whole conversations on each side, seeded and
optionally stratified by a field (docs/data.md). Conversations of one participant may
straddle the split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attunebench.data.schema import Conversation

MISSING = "(none)"


class SplitError(ValueError):
    """What was asked cannot be split as asked (the share, or a field no record has)."""


@dataclass(frozen=True)
class Split:
    train: list[Conversation]
    test: list[Conversation]
    strata: dict[str, tuple[int, int]]  # stratum value -> (train, test) conversations


def field_value(conversation: Conversation, path: str) -> str:
    """The value at a dotted path of the record as a string, or MISSING where it is absent."""
    value: object = conversation.model_dump(mode="json")
    for part in path.split("."):
        if not isinstance(value, dict) or value.get(part) is None:
            return MISSING
        value = value[part]
    if isinstance(value, dict | list):
        raise SplitError(f"--stratify {path}: holds a {type(value).__name__}, not one value")
    return str(value)


def split(
    conversations: Sequence[Conversation], train: float, seed: int, stratify: str | None = None
) -> Split:
    """Whole conversations into train and test: of each stratum's n, round(train * n) to train
    (halves to even), at least one to each side where n >= 2, each side in the file's order."""
    if not 0.0 < train < 1.0:
        raise SplitError(f"--train {train} is not a share between 0 and 1 (0.8: 80% to train)")
    if len(conversations) < 2:
        raise SplitError(f"{len(conversations)} conversation(s): nothing to split")
    groups: dict[str, list[int]] = {}
    for index, conversation in enumerate(conversations):
        key = field_value(conversation, stratify) if stratify else "all"
        groups.setdefault(key, []).append(index)
    if stratify and set(groups) == {MISSING}:
        raise SplitError(f"--stratify {stratify}: no conversation has this field")
    rng = np.random.default_rng(seed)
    chosen: set[int] = set()
    strata: dict[str, tuple[int, int]] = {}
    for key in sorted(groups):
        members = groups[key]
        take = round(train * len(members))
        if len(members) >= 2:
            take = min(max(take, 1), len(members) - 1)
        picked = rng.permutation(len(members))[:take]
        chosen.update(members[int(i)] for i in picked)
        strata[key] = (take, len(members) - take)
    return Split(
        train=[c for i, c in enumerate(conversations) if i in chosen],
        test=[c for i, c in enumerate(conversations) if i not in chosen],
        strata=strata,
    )
