"""The `attunebench/v1` conversation format: frozen, typed records (docs/data.md describes each
field, its scale and the provenance values).

One conversation is one JSON Lines record. Every field except the texts is optional, so a
corpus supplies what it has and each task uses the turns that carry its gold. Scales are fixed
by the format, so that numbers from different corpora mean the same thing.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, get_args

from pydantic import Field, StringConstraints, model_validator

from attunebench.frozen import Frozen

FORMAT: Final = "attunebench/v1"

NonEmptyText = Annotated[str, StringConstraints(min_length=1, strip_whitespace=False)]
Identifier = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Label = Annotated[str, StringConstraints(min_length=1, max_length=100)]

SourceKind = Literal["collected", "imported", "sample", "simulated"]
Provenance = Literal[
    "first-person", "actor", "third-party", "machine", "derived", "illustrative", "simulated"
]
PROVENANCES: tuple[Provenance, ...] = get_args(Provenance)

# Fields whose provenance a source may declare.
LABELLED_FIELDS = (
    "state",
    "state.intensity",
    "context.emotion",
    "behaviors",
    "rating",
    "preference",
    "need",
    "outcome",
)


class RatingScale(Frozen):
    low: float
    high: float
    description: str | None = None


class Source(Frozen):
    kind: SourceKind
    name: Identifier
    license: str | None = None
    url: str | None = None
    citation: str | None = None
    provenance: dict[str, Provenance] = Field(
        default_factory=dict,
        description=(
            "For each labelled field (state, behaviors, rating, preference, ...), who gave it."
        ),
    )
    rating_scale: RatingScale | None = None
    notes: str | None = None


class Participant(Frozen):
    id: Identifier = Field(description="Pseudonymous participant id; never a real name.")
    traits: dict[str, str] = Field(
        default_factory=dict, description="Optional self-reported traits (age band, ...)."
    )


LabelValence = Literal["negative", "neutral", "positive"]


class TaxonomyLabel(Frozen):
    name: Label
    description: str
    synonyms: tuple[str, ...] = ()
    valence: LabelValence | None = Field(
        default=None,
        description="Whether the feeling is an unpleasant, neutral or pleasant one, where the "
        "taxonomy says (the share of negative labels is read from it).",
    )


class Taxonomy(Frozen):
    id: Identifier
    version: str
    description: str | None = None
    emotions: tuple[TaxonomyLabel, ...] = ()
    behaviors: tuple[TaxonomyLabel, ...] = ()

    def emotion_names(self) -> frozenset[str]:
        return frozenset(label.name for label in self.emotions)

    def behavior_names(self) -> frozenset[str]:
        return frozenset(label.name for label in self.behaviors)


class Context(Frozen):
    topic: str | None = None
    situation: str | None = None
    emotion: Label | None = Field(
        default=None, description="A conversation-level emotion label, where a corpus has one."
    )
    opening: str | None = Field(
        default=None,
        description="What the other side said before the user's first message, if anything.",
    )
    labels: dict[str, str] = Field(
        default_factory=dict, description="Other conversation-level labels, free-form."
    )


class State(Frozen):
    """How the user said they felt at this turn (or, per provenance, how others judged it)."""

    emotions: tuple[Label, ...] = ()
    primary: Label | None = None
    intensity: Annotated[float, Field(ge=1, le=5)] | None = None
    valence: Annotated[float, Field(ge=-1, le=1)] | None = None
    arousal: Annotated[float, Field(ge=0, le=1)] | None = None
    panas: dict[str, Annotated[int, Field(ge=1, le=5)]] | None = None


class Response(Frozen):
    id: Identifier
    model: str | None = Field(default=None, description="Hidden id of what produced the reply.")
    text: NonEmptyText
    behaviors: tuple[Label, ...] = ()
    rating: float | None = None
    flags: tuple[str, ...] = Field(
        default=(), description="Data-quality flags, e.g. 'reveals-identity'."
    )


class Need(Frozen):
    """What would help most right now: asked after the user's message, before any reply is shown,
    so it cannot give away which reply they went on to prefer."""

    text: str | None = Field(default=None, description="In their words.")
    behaviors: tuple[Label, ...] = Field(default=(), description="Behaviors they wanted.")


class Preference(Frozen):
    chosen: Identifier | None = Field(default=None, description="Preferred response id.")
    tie: bool = False
    strength: Annotated[int, Field(ge=1, le=3)] | None = None
    comment: str | None = Field(
        default=None,
        description="Post-hoc: written after reading the replies (may name or echo one of them).",
    )
    comment_behaviors: tuple[Label, ...] = Field(
        default=(), description="Post-hoc: behaviors they said, after the replies, they wanted."
    )

    @model_validator(mode="before")
    @classmethod
    def _legacy_names(cls, data: Any) -> Any:
        # Files written before the split named the post-hoc answers `wanted` and
        # `wanted_behaviors`; they were asked after the replies, so they are comments.
        if isinstance(data, dict) and ("wanted" in data or "wanted_behaviors" in data):
            data = dict(data)
            for old, new in (("wanted", "comment"), ("wanted_behaviors", "comment_behaviors")):
                if old in data and new not in data:
                    data[new] = data.pop(old)
        return data


class Turn(Frozen):
    index: Annotated[int, Field(ge=0)]
    user: NonEmptyText
    state: State | None = None
    responses: tuple[Response, ...] = ()
    feedback: float | None = Field(
        default=None,
        description=(
            "A rating the user gave with this message of the other side's replies since their "
            "previous feedback (ESConv seeker feedback), on the source's rating scale."
        ),
    )
    need: Need | None = None
    preference: Preference | None = None
    continued: Identifier | None = Field(
        default=None, description="Id of the response the conversation went on with."
    )
    continued_by: Literal["pick", "random", "only"] | None = Field(
        default=None,
        description=(
            "How `continued` was chosen: the participant's pick, a seeded random draw between "
            "tied replies, or the only reply there was."
        ),
    )

    def response(self, response_id: str) -> Response | None:
        return next((r for r in self.responses if r.id == response_id), None)

    def continued_response(self) -> Response | None:
        return None if self.continued is None else self.response(self.continued)


class Outcome(Frozen):
    final_state: State | None = None
    rating: float | None = None
    survey: dict[str, str | float] = Field(default_factory=dict)
    scales: dict[str, RatingScale] = Field(
        default_factory=dict,
        description=(
            "The scale of `rating` (key `rating`) and of each numeric survey answer (its key), "
            "where it is not 1 to 5."
        ),
    )


class Probe(Frozen):
    """A question the participant was asked again later in the same session (a retest probe):
    the emotion check on one of their earlier messages (shown again, the earlier answer
    hidden), or an earlier pair of replies shown in the swapped order. Exactly one of `state`
    and `preference` holds the repeat answer, in the turn's own terms (`chosen` names one of
    that turn's response ids).

    Never gold and never shown to a model: the first answer, on the turn, is the gold. A probe
    measures the person's own consistency, the ceiling a model's headline is read against.
    Only collected data has probes; no importer writes them.
    """

    turn: Annotated[int, Field(ge=0)] = Field(description="Index of the turn re-asked.")
    after: Annotated[int, Field(ge=0)] = Field(
        description="Index of the last turn the participant had completed when it was asked."
    )
    state: State | None = Field(default=None, description="The emotion check, answered again.")
    preference: Preference | None = Field(
        default=None, description="The pick, answered again with the replies' places swapped."
    )


class Conversation(Frozen):
    format: Literal["attunebench/v1"] = FORMAT
    id: Identifier
    source: Source
    participant: Participant | None = None
    taxonomy: Identifier | Taxonomy
    context: Context = Field(default_factory=Context)
    turns: tuple[Turn, ...]
    outcome: Outcome | None = None
    probes: tuple[Probe, ...] = Field(
        default=(), description="Questions asked again later in the session (retest probes)."
    )

    @property
    def taxonomy_id(self) -> str:
        return self.taxonomy if isinstance(self.taxonomy, str) else self.taxonomy.id
