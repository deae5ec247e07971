"""What a dataset holds: sizes and label distributions.

`StatsBuilder` counts one conversation at a time (so a file can be streamed through it while it
is validated); `compute_stats` is the one-call form. How many items carry each task's gold, and
who gave it, is the tasks' to say (`attunebench.tasks.helpers.gold_stats`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from attunebench.data.schema import Conversation, Turn
from attunebench.frozen import Frozen


class Coverage(Frozen):
    """How many turns' states carry each scale."""

    intensity: int
    valence: int
    arousal: int
    panas: int


class DatasetStats(Frozen):
    conversations: int
    turns: int
    responses: int
    participants: int
    conversations_without_participant: int
    sources: dict[str, int]
    taxonomies: dict[str, int]
    turns_per_conversation: dict[int, int]
    responses_per_turn: dict[int, int]
    emotions: dict[str, int]
    primary: dict[str, int]
    behaviors: dict[str, int]
    wanted_behaviors: dict[str, int]
    context_emotions: dict[str, int]
    coverage: Coverage
    rated_responses: int
    turns_with_state: int
    responses_with_behaviors: int
    turns_with_wanted_behaviors: int
    pick_position: dict[int, int]
    pick_strength: dict[int, int]
    picks_by_model: dict[str, int]
    traits: dict[str, dict[str, int]]
    provenance: dict[str, dict[str, int]]


def _ranked(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def _by_key(counter: Counter[int]) -> dict[int, int]:
    return dict(sorted(counter.items()))


@dataclass(slots=True)
class StatsBuilder:
    """Accumulates counts conversation by conversation; `build()` freezes them."""

    counts: Counter[str] = field(default_factory=Counter)
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
        self._label("source", conversation.source.name)
        self._label("taxonomy", conversation.taxonomy_id)
        for labelled, who in conversation.source.provenance.items():
            self.provenance.setdefault(labelled, Counter())[who] += 1
        if conversation.participant is None:
            c["no_participant"] += 1
        else:
            self.participant_traits[conversation.participant.id] = conversation.participant.traits
        if conversation.context.emotion is not None:
            self._label("context_emotion", conversation.context.emotion)
        self._size("turns", len(conversation.turns))
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
                c[f"coverage_{scale}"] += getattr(state, scale) is not None
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
        c = self.counts

        def labels(kind: str) -> dict[str, int]:
            return _ranked(self.labels.get(kind, Counter()))

        def sizes(kind: str) -> dict[int, int]:
            return _by_key(self.sizes.get(kind, Counter()))

        return DatasetStats(
            conversations=c["conversations"],
            turns=c["turns"],
            responses=c["responses"],
            participants=len(self.participant_traits),
            conversations_without_participant=c["no_participant"],
            sources=labels("source"),
            taxonomies=labels("taxonomy"),
            turns_per_conversation=sizes("turns"),
            responses_per_turn=sizes("responses_per_turn"),
            emotions=labels("emotions"),
            primary=labels("primary"),
            behaviors=labels("behaviors"),
            wanted_behaviors=labels("wanted_behaviors"),
            context_emotions=labels("context_emotion"),
            coverage=Coverage(**{scale: c[f"coverage_{scale}"] for scale in Coverage.model_fields}),
            rated_responses=c["rated_responses"],
            turns_with_state=c["turns_with_state"],
            responses_with_behaviors=c["responses_with_behaviors"],
            turns_with_wanted_behaviors=c["turns_with_wanted_behaviors"],
            pick_position=sizes("pick_position"),
            pick_strength=sizes("pick_strength"),
            picks_by_model=labels("picks_by_model"),
            traits=self._traits(),
            provenance={k: _ranked(v) for k, v in sorted(self.provenance.items())},
        )


def compute_stats(conversations: Iterable[Conversation]) -> DatasetStats:
    builder = StatsBuilder()
    for conversation in conversations:
        builder.add(conversation)
    return builder.build()
