"""What a dataset holds: sizes and label distributions, counted one conversation at a time (so a
file streams through while it is validated). Gold per task is the tasks' to say.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field

from attunebench.data.schema import Conversation, Turn
from attunebench.frozen import Frozen


class Coverage(Frozen):
    """How many turns' states carry each scale."""

    intensity: int
    valence: int
    arousal: int
    panas: int


# How many of each label (most frequent first) or each size (smallest first); none counted: {}
Labels = Annotated[dict[str, int], Field(default_factory=dict)]
Sizes = Annotated[dict[int, int], Field(default_factory=dict)]


class DatasetStats(Frozen):
    conversations: int = 0
    turns: int = 0
    responses: int = 0
    participants: int
    conversations_without_participant: int = 0
    sources: Labels
    taxonomies: Labels
    turns_per_conversation: Sizes
    responses_per_turn: Sizes
    emotions: Labels
    primary: Labels
    behaviors: Labels
    wanted_behaviors: Labels
    context_emotions: Labels
    coverage: Coverage
    rated_responses: int = 0
    turns_with_state: int = 0
    responses_with_behaviors: int = 0
    turns_with_wanted_behaviors: int = 0
    pick_position: Sizes
    pick_strength: Sizes
    picks_by_model: Labels
    traits: dict[str, dict[str, int]]
    provenance: dict[str, dict[str, int]]


def _ranked(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass(slots=True)
class StatsBuilder:
    """Accumulates counts conversation by conversation; `build()` freezes them. Each count,
    label distribution and size distribution is kept under its `DatasetStats` field's name."""

    counts: Counter[str] = field(default_factory=Counter)
    coverage: Counter[str] = field(default_factory=Counter)
    labels: dict[str, Counter[str]] = field(default_factory=dict)
    sizes: dict[str, Counter[int]] = field(default_factory=dict)
    participant_traits: dict[str, dict[str, str]] = field(default_factory=dict)
    provenance: dict[str, Counter[str]] = field(default_factory=dict)

    def _label(self, kind: str, *values: str) -> None:
        self.labels.setdefault(kind, Counter()).update(values)

    def _size(self, kind: str, value: int) -> None:
        self.sizes.setdefault(kind, Counter())[value] += 1

    def add(self, conversation: Conversation) -> None:
        c = self.counts
        c["conversations"] += 1
        self._label("sources", conversation.source.name)
        self._label("taxonomies", conversation.taxonomy_id)
        for labelled, who in conversation.source.provenance.items():
            self.provenance.setdefault(labelled, Counter())[who] += 1
        if conversation.participant is None:
            c["conversations_without_participant"] += 1
        else:
            self.participant_traits[conversation.participant.id] = conversation.participant.traits
        if conversation.context.emotion is not None:
            self._label("context_emotions", conversation.context.emotion)
        self._size("turns_per_conversation", len(conversation.turns))
        for turn in conversation.turns:
            self._add_turn(turn)

    def _add_turn(self, turn: Turn) -> None:
        c = self.counts
        c["turns"] += 1
        c["responses"] += len(turn.responses)
        self._size("responses_per_turn", len(turn.responses))
        if turn.state is not None:
            c["turns_with_state"] += 1
            state = turn.state
            self._label("emotions", *state.emotions)
            if state.primary is not None:
                self._label("primary", state.primary)
            for scale in Coverage.model_fields:
                self.coverage[scale] += getattr(state, scale) is not None
        for response in turn.responses:
            self._label("behaviors", *response.behaviors)
            c["rated_responses"] += response.rating is not None
            c["responses_with_behaviors"] += bool(response.behaviors)
        if turn.need is not None:
            self._label("wanted_behaviors", *turn.need.behaviors)
            c["turns_with_wanted_behaviors"] += bool(turn.need.behaviors)
        self._add_pick(turn)

    def _add_pick(self, turn: Turn) -> None:
        preference = turn.preference
        if preference is None or len(turn.responses) < 2:
            return
        chosen = turn.response(preference.chosen) if preference.chosen is not None else None
        if chosen is None and not preference.tie:
            return
        if chosen is not None:
            self._size("pick_position", turn.responses.index(chosen) + 1)
            self._label("picks_by_model", chosen.model or "(unknown)")
        if preference.strength is not None:
            self._size("pick_strength", preference.strength)

    def _traits(self) -> dict[str, dict[str, int]]:
        by_trait: dict[str, Counter[str]] = {}
        for traits in self.participant_traits.values():
            for name, value in traits.items():
                by_trait.setdefault(name, Counter())[value] += 1
        return {name: _ranked(values) for name, values in sorted(by_trait.items())}

    def build(self) -> DatasetStats:
        return DatasetStats.model_validate(
            {
                **self.counts,
                **{kind: _ranked(counter) for kind, counter in self.labels.items()},
                **{kind: dict(sorted(counter.items())) for kind, counter in self.sizes.items()},
                "participants": len(self.participant_traits),
                "coverage": {scale: self.coverage[scale] for scale in Coverage.model_fields},
                "traits": self._traits(),
                "provenance": {k: _ranked(v) for k, v in sorted(self.provenance.items())},
            }
        )


def compute_stats(conversations: Iterable[Conversation]) -> DatasetStats:
    builder = StatsBuilder()
    for conversation in conversations:
        builder.add(conversation)
    return builder.build()
