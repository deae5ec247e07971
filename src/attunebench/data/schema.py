"""The `attunebench/v1` conversation format: frozen, typed records.

One conversation is one JSON Lines record. Every field except the texts is optional, so a
corpus supplies what it has and each task uses the turns that carry its gold. Scales are fixed
by the format so that numbers from different corpora mean the same thing:

- `intensity`: 1 (barely) to 5 (overwhelming), as in ESConv's pre/post survey.
- `valence`: -1 (very unpleasant) to 1 (very pleasant).
- `arousal`: 0 (calm) to 1 (activated).
- `rating`: on the scale the source declares in `Source.rating_scale`.

Which labels are first-person (given by the person who held the conversation) and which come
from third parties is declared per field in `Source.provenance`; reports repeat it.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

FORMAT: Final = "attunebench/v1"

NonEmptyText = Annotated[str, StringConstraints(min_length=1, strip_whitespace=False)]
Identifier = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Label = Annotated[str, StringConstraints(min_length=1, max_length=100)]

SourceKind = Literal["collected", "imported", "sample", "simulated"]
Provenance = Literal["first-person", "third-party", "machine", "derived"]

# Fields whose provenance a source may declare.
LABELLED_FIELDS = (
    "state",
    "state.intensity",
    "context.emotion",
    "behaviors",
    "rating",
    "preference",
    "outcome",
)


class Record(BaseModel):
    """Base of every on-disk record: immutable and strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=False)


class RatingScale(Record):
    low: float
    high: float
    description: str | None = None


class Source(Record):
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


class Participant(Record):
    id: Identifier = Field(description="Pseudonymous participant id; never a real name.")
    traits: dict[str, str] = Field(
        default_factory=dict, description="Optional self-reported traits (age band, ...)."
    )


class TaxonomyLabel(Record):
    name: Label
    description: str
    synonyms: tuple[str, ...] = ()


class Taxonomy(Record):
    id: Identifier
    version: str
    description: str | None = None
    emotions: tuple[TaxonomyLabel, ...] = ()
    behaviors: tuple[TaxonomyLabel, ...] = ()

    def emotion_names(self) -> frozenset[str]:
        return frozenset(label.name for label in self.emotions)

    def behavior_names(self) -> frozenset[str]:
        return frozenset(label.name for label in self.behaviors)


class Context(Record):
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


class State(Record):
    """How the user said they felt at this turn (or, per provenance, how others judged it)."""

    emotions: tuple[Label, ...] = ()
    primary: Label | None = None
    intensity: Annotated[float, Field(ge=1, le=5)] | None = None
    valence: Annotated[float, Field(ge=-1, le=1)] | None = None
    arousal: Annotated[float, Field(ge=0, le=1)] | None = None
    panas: dict[str, Annotated[int, Field(ge=1, le=5)]] | None = None


class Response(Record):
    id: Identifier
    model: str | None = Field(default=None, description="Hidden id of what produced the reply.")
    text: NonEmptyText
    behaviors: tuple[Label, ...] = ()
    rating: float | None = None
    flags: tuple[str, ...] = Field(
        default=(), description="Data-quality flags, e.g. 'reveals-identity'."
    )


class Preference(Record):
    chosen: Identifier | None = Field(default=None, description="Preferred response id.")
    tie: bool = False
    strength: Annotated[int, Field(ge=1, le=3)] | None = None
    wanted: str | None = Field(default=None, description="In their words, what they wanted.")
    wanted_behaviors: tuple[Label, ...] = ()


class Turn(Record):
    index: Annotated[int, Field(ge=0)]
    user: NonEmptyText
    state: State | None = None
    responses: tuple[Response, ...] = ()
    preference: Preference | None = None
    continued: Identifier | None = Field(
        default=None, description="Id of the response the conversation went on with."
    )

    def response(self, response_id: str) -> Response | None:
        return next((r for r in self.responses if r.id == response_id), None)

    def continued_response(self) -> Response | None:
        return None if self.continued is None else self.response(self.continued)


class Outcome(Record):
    final_state: State | None = None
    rating: float | None = None
    survey: dict[str, str | float] = Field(default_factory=dict)


class Conversation(Record):
    format: Literal["attunebench/v1"] = FORMAT
    id: Identifier
    source: Source
    participant: Participant | None = None
    taxonomy: Identifier | Taxonomy
    context: Context = Field(default_factory=Context)
    turns: tuple[Turn, ...]
    outcome: Outcome | None = None

    @property
    def taxonomy_id(self) -> str:
        return self.taxonomy if isinstance(self.taxonomy, str) else self.taxonomy.id
