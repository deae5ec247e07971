"""What a task is: one typed declaration the engine and the analysis both read
(docs/architecture.md, "A task, declared once"). A task registers itself (or a factory) with
`TASKS`, whose keyword arguments are its options (plus `seed`); its gold and prediction are
frozen pydantic types, stored as JSON in the records.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar, Generic, Literal, TypeVar, cast, get_args, get_origin

from attunebench.answerform import AnswerForm, TaskHint
from attunebench.data.schema import LABELLED_FIELDS, Conversation, Taxonomy
from attunebench.data.taxonomy import taxonomy_of
from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams, Message
from attunebench.prompts import PromptTemplate
from attunebench.records import ItemRecord, PromptInfo, Status, Verdict
from attunebench.registry import Registry
from attunebench.tasks.helpers.gold_stats import GoldCounts
from attunebench.tasks.helpers.history import ContextMode, context_modes
from attunebench.tasks.helpers.metrics import Metric
from attunebench.tasks.helpers.twins import Variant, shown_variant

AnswerMode = Literal["generate", "choice"]
CallRole = Literal["subject", "judge"]
GoldLevel = Literal["turn", "conversation", "reply", "pair", "rating"]


def context_of(variant: str) -> ContextMode:
    """The context mode an item of this variant is asked in (blind where it has none)."""
    return "informed" if shown_variant(variant) == "informed" else "blind"


class Gold(Frozen):
    """What every task's gold says about itself: its level, whether it was derived, its corpus
    part (`source.name`, set by `in_contexts`; None in older records), and which of its fields
    are the person's answer (`answer_fields`; the others say where the item sits)."""

    level: GoldLevel = "turn"
    derived: bool = False
    part: str | None = None
    answer_fields: ClassVar[tuple[str, ...]] = ()


G = TypeVar("G", bound=Gold)
P = TypeVar("P", bound=Frozen)


class InvalidAnswer(ValueError):
    """The output is not an answer of the kind asked for; `partial` is what could be read."""

    def __init__(self, message: str, partial: Frozen | None = None) -> None:
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True, slots=True)
class Item(Generic[G]):
    """One unit of evaluation, addressed by (task, conversation_id, turn_index, item_id)."""

    task: str
    conversation: Conversation
    turn_index: int
    item_id: str
    taxonomy: Taxonomy
    gold: G
    variant: Variant = ""
    # A person-hidden twin's conversation as it happened (`tasks.helpers.twins`): `conversation` is
    # then the copy its prompts read, with the person's words hidden.
    happened: Conversation | None = None

    @property
    def context(self) -> ContextMode:
        return context_of(self.variant)

    def as_happened(self) -> Item[G]:
        """The item on the conversation as it happened (a twin with the person's words back)."""
        if self.happened is None:
            return self
        return replace(self, conversation=self.happened, happened=None)

    @property
    def key(self) -> str:
        parts = (self.task, self.conversation.id, str(self.turn_index), self.item_id, self.variant)
        return "|".join(parts)


@dataclass(frozen=True, slots=True)
class ChoiceForm:
    """A question answered by the next token, one of `keys` (standing for `labels`)."""

    messages: tuple[Message, ...]
    keys: tuple[str, ...]
    labels: tuple[str, ...]


# JSON answers are short; asking for JSON mode helps servers that support it.
JSON_PARAMS = GenerateParams(temperature=0.0, max_tokens=300, json_mode=True)


@dataclass(frozen=True, slots=True)
class Query:
    """One model call an item needs (`model` None: the evaluated model; else a judge)."""

    key: str
    messages: list[Message]
    prompt: PromptInfo
    params: GenerateParams = JSON_PARAMS
    hint: TaskHint | None = None
    role: CallRole = "subject"
    model: str | None = None
    choice: ChoiceForm | None = None
    # A judge's verdict on a reference from the data (a real model's reply), not on the answer:
    # its failure is not the answer's.
    of_reference: bool = False


@dataclass(frozen=True, slots=True)
class Output:
    """What one query got back: the text (generate), or the keys' probabilities (choice)."""

    text: str | None = None
    probabilities: Mapping[str, float] | None = None
    floored: tuple[str, ...] = ()  # keys missing from the provider's top-k, given the floor
    error: str | None = None
    permanent: bool = False  # a failure no retry can mend (HTTP 4xx other than 429)
    cache_hit: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    reasoning_tokens: int = 0  # part of output_tokens: the model's hidden reasoning
    thinking: str | None = None  # reasoning text the model showed; kept, never parsed

    @property
    def ok(self) -> bool:
        return self.error is None and (self.text is not None or self.probabilities is not None)

    @property
    def shown(self) -> str:
        """The output as a person reads it in a record."""
        if self.probabilities is not None:
            return " ".join(f"{k}={p:.3f}" for k, p in self.probabilities.items())
        return self.text or ""


@dataclass(frozen=True, slots=True)
class Scored:
    """A prediction's per-item score and other values; `invalid` marks an answer that cannot
    be scored on its merits (a judge derailed on every verdict)."""

    score: float | None
    values: Mapping[str, float | None] = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    invalid: str | None = None


@dataclass(frozen=True, slots=True)
class JudgedVerdict:
    """One judge query's verdict, as the judged task reads it."""

    query: Query
    verdict: Verdict


class View(Generic[G, P]):
    """A record with its gold and prediction read back into the task's types; not to be
    changed. Slotted rather than a frozen dataclass, whose construction is several times slower
    (metrics read a hundred thousand views an analysis)."""

    __slots__ = ("gold", "parsed", "prediction", "record", "status")

    def __init__(
        self, record: ItemRecord, gold: G, prediction: P | None, status: str | None = None
    ) -> None:
        """`status`: the record's, where the caller has it (an analysis reads it from its
        columns rather than from a hundred thousand records)."""
        self.record = record
        self.gold = gold
        self.prediction = prediction
        # the record's field read once, where not given
        self.status: str = (status := record.status if status is None else status)
        self.parsed: bool = status == "ok"

    def __repr__(self) -> str:
        return f"View(record={self.record!r}, gold={self.gold!r}, prediction={self.prediction!r})"

    @property
    def score(self) -> float | None:
        return self.record.score

    def value(self, name: str) -> float | None:
        return self.record.scores.get(name)

    @property
    def scores(self) -> Mapping[str, float | None]:
        return self.record.scores

    @property
    def flags(self) -> tuple[str, ...]:
        return self.record.flags


@dataclass(frozen=True, slots=True)
class Repeat(Generic[G, P]):
    """A person's repeat answer to an item (a retest probe), read as a prediction of it."""

    item: Item[G]
    prediction: P


# A reference's guess at one item: its prediction and how the task scores it (None: no guess).
Guess = tuple[Frozen, Scored] | None


@dataclass(frozen=True, slots=True)
class Reference(Generic[G]):
    """A predictor that reads only what an item's gold says of its position or length, or
    nothing. `fit` learns from train golds (`tasks.helpers.fitting` chooses them; None for a
    rule), so what it learns never comes from the item `guess` guesses."""

    guess: Callable[[Any, Sequence[G]], list[Guess]]
    fit: Callable[[Sequence[G]], Any] | None = None


@dataclass(frozen=True, slots=True)
class RecordedReference(Generic[G]):
    """A reference judged in the run, its guess read from records holding the value `reads`."""

    reads: str
    guess: Callable[[View[G, Any]], Guess]


class Scoring(Generic[G, P]):
    """What the analysis reads of a task (`Task.scoring`): its metrics and the headline (one on
    which a constant or position-only predictor scores chance), references, how records read
    back, and the people's repeat answers. Made with its task; every method has a default."""

    headline: ClassVar[str] = "mean per-item score"  # what the headline metric is, in words
    headline_metric: ClassVar[str] = "score"  # the declared metric that is the headline
    metrics: ClassVar[tuple[Metric, ...]] = ()
    # The reference (a key of `references`) that guesses the answer most usual at an item's
    # point of a conversation: the crowd's answer, which a simulated person must beat.
    crowd: ClassVar[str | None] = None

    def __init__(self, task: Task[G, P]) -> None:
        self.task = task

    @classmethod
    def check_task(cls, task: type[Task[Any, Any]]) -> None:
        """Refuse, when the task's class is defined, a task this scoring cannot read."""

    def metric(self, name: str | None = None) -> Metric:
        """The declared metric of this name; the headline's by default."""
        wanted = name or self.headline_metric
        return next(metric for metric in self.metrics if metric.name == wanted)

    def references(self, context: ContextMode = "blind") -> Mapping[str, Reference[G]]:
        """Predictors reading only an item's position or length (or nothing), scored beside
        the models; informed, also what that prompt reveals."""
        return {}

    def answered_gold(self, gold: G, prediction: P) -> G | None:
        """The gold had the person given `prediction` as their own answer (a simulated
        person's, replayed); None where it holds no answer the gold could."""
        return None

    def recorded_references(self) -> Mapping[str, RecordedReference[G]]:
        """References judged in the run (a real model's reply from the data), read back from
        any model's record of the item; shown as reference rows, never ranked."""
        return {}

    def extra_metrics(self, records: Sequence[ItemRecord]) -> tuple[Metric, ...]:
        """Metrics that depend on what the records hold (one per judge, say)."""
        return ()

    def retests(self, conversations: Iterable[Conversation]) -> Iterator[Repeat[G, P]]:
        """The people's repeat answers (`Conversation.probes`), for the headline metric to
        score them against themselves."""
        return iter(())

    def chance(self, golds: Sequence[G]) -> float | None:
        """The headline's chance level: what the best predictor that never reads the item can
        expect (None: not declared)."""
        return None

    def choice_gold(self, item: Item[G], query: Query) -> str | None:
        """The gold option of one choice question (None: no gold), for other harnesses."""
        return None

    def calibration_rows(self, view: View[G, P]) -> list[tuple[Mapping[str, float], str]]:
        """A choice answer's distributions, each with its gold option."""
        return []

    def label_sets(self, view: View[G, P]) -> tuple[frozenset[str], frozenset[str]] | None:
        """An item's (predicted, gold) labels; None for a task without labels."""
        return None

    def view(self, record: ItemRecord) -> View[G, P]:
        """A record read back into this task's types, without validation: records are written
        from these very types, and an analysis reads hundreds of thousands of them."""
        gold: Any = self.task.gold_type.model_construct(**(record.gold or {}))
        prediction: Any = None
        if record.prediction is not None:
            prediction = self.task.prediction_type.model_construct(**record.prediction)
        return View(record, gold, prediction)


class Task(ABC, Generic[G, P]):
    """A task's declaration: `class X(Task[Gold, Prediction], scoring=XScoring)`."""

    name: ClassVar[str]
    # Read from the class's `Task[Gold, Prediction]` base (`__init_subclass__`), so a task
    # names its types once.
    gold_type: ClassVar[type[Gold]]
    prediction_type: ClassVar[type[Frozen]]
    _scoring_part: ClassVar[type[Scoring[Any, Any]]] = Scoring
    # Dataset fields whose provenance is this task's gold's (a key of Source.provenance).
    gold_fields: ClassVar[tuple[str, ...]] = ()
    # The forms of the answers the evaluated model is asked for (one per hint kind sent).
    subject_forms: ClassVar[tuple[AnswerForm, ...]] = ()
    needs_judge: ClassVar[bool] = False
    evaluates: ClassVar[Literal["models", "judges"]] = "models"
    answer_modes: ClassVar[tuple[AnswerMode, ...]] = ("generate",)
    # The prompts it may use, whose versions run.json and the cache keys record (a task whose
    # options choose among them sets its own).
    templates: tuple[PromptTemplate, ...] = ()
    # The contexts each item is asked in: the `context` option's, or none ("").
    modes: tuple[Variant, ...] = ("",)
    # The options it was made with (`register_task` records them): for run.json, and to make
    # the same task again from a run's record.
    options: Mapping[str, Any] = MappingProxyType({})

    def __init__(self, context: str | None = None) -> None:
        """`context`: blind, informed or both; None where items have no context."""
        if context is not None:
            self.modes = context_modes(context)

    def __init_subclass__(
        cls, scoring: type[Scoring[Any, Any]] | None = None, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if scoring is not None:
            cls._scoring_part = scoring
        for base in getattr(cls, "__orig_bases__", ()):
            types = get_args(base) if get_origin(base) is Task else ()
            if all(isinstance(t, type) for t in types) and types:
                cls.gold_type, cls.prediction_type = types
        # A field the format cannot label has no provenance to read: the report would call the
        # gold undeclared and the simulators would drop the task, both without a word.
        if unknown := [name for name in cls.gold_fields if name not in LABELLED_FIELDS]:
            raise TypeError(
                f"{cls.__qualname__}.gold_fields names {', '.join(map(repr, unknown))}, not a"
                f" field the data format labels ({', '.join(LABELLED_FIELDS)})"
            )
        if scoring is not None and hasattr(cls, "gold_type"):
            scoring.check_task(cls)

    @functools.cached_property
    def scoring(self) -> Scoring[G, P]:
        """Its analysis part, made once with the task (whose options it may read)."""
        return self._scoring_part(self)

    @property
    def judge_forms(self) -> tuple[AnswerForm, ...]:
        """The forms of the answers this task's judges are asked for."""
        return ()

    @abstractmethod
    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item[G]]: ...

    @abstractmethod
    def queries(self, item: Item[G], mode: AnswerMode) -> list[Query]: ...

    @abstractmethod
    def parse(self, item: Item[G], outputs: Mapping[str, Output]) -> P: ...

    @abstractmethod
    def score(self, item: Item[G], prediction: P) -> Scored: ...

    def worst(self, item: Item[G], partial: P | None) -> Scored:
        """The score of an invalid answer: 0, unless a task's score has parts or another floor."""
        return Scored(0.0)

    def judge_queries(self, item: Item[G], prediction: P, judges: Sequence[str]) -> list[Query]:
        """A judged task's second stage: the judge calls its prediction needs."""
        return []

    def judged(self, item: Item[G], prediction: P, verdicts: Sequence[JudgedVerdict]) -> Scored:
        return self.score(item, prediction)

    def left_out(self, conversations: Sequence[Conversation]) -> dict[str, int]:
        """Items deliberately left out of this task, by reason."""
        return {}

    def gold_counts(self, conversations: Iterable[Conversation]) -> GoldCounts:
        """Its own counts of its gold, beside its items, for `data stats`."""
        return GoldCounts()


def in_contexts(
    task: Task[G, Any], conversation: Conversation, turn_index: int, item_id: str, gold: G
) -> Iterator[Item[G]]:
    """One item of a task, once in each context it is asked in, its gold in its corpus part."""
    taxonomy = taxonomy_of(conversation)
    name = conversation.source.name  # the corpus part
    gold = gold if gold.part == name else gold.model_copy(update={"part": name})
    for mode in task.modes:
        yield Item(task.name, conversation, turn_index, item_id, taxonomy, gold, mode)


def chance_by_part(golds: Iterable[G], chance: Callable[[list[G]], float | None]) -> float | None:
    """The mean over corpus parts (`Gold.part`) of each part's `chance`, weighted by its items
    (None: no part has one)."""
    parts: dict[str | None, list[G]] = {}
    for gold in golds:
        parts.setdefault(gold.part, []).append(gold)
    found = [
        (value, len(group)) for group in parts.values() if (value := chance(group)) is not None
    ]
    total = sum(items for _, items in found)
    return sum(value * items for value, items in found) / total if total else None


def item_record(
    item: Item[Any],
    model: str,
    status: Status,
    *,
    prediction: Frozen | None = None,
    scored: Scored | None = None,
    **fields: Any,
) -> ItemRecord:
    """The record of `model`'s answer to an item; `fields` the rest a record holds, where a
    caller has them."""
    return ItemRecord(
        task=item.task,
        model=model,
        conversation_id=item.conversation.id,
        turn_index=item.turn_index,
        item_id=item.item_id,
        variant=item.variant,
        status=status,
        gold=item.gold.model_dump(mode="json"),
        prediction=None if prediction is None else prediction.model_dump(mode="json"),
        score=scored.score if scored is not None else None,
        scores=dict(scored.values) if scored is not None else {},
        flags=scored.flags if scored is not None else (),
        **fields,
    )


def prompts_of(task: Task[Any, Any]) -> list[PromptInfo]:
    """Every prompt a task may use, with versions (for run.json and cache keys)."""
    return [template.info for template in task.templates]


TaskFactory = Callable[..., Task[Any, Any]]
TASKS: Registry[TaskFactory] = Registry("task")
F = TypeVar("F", bound=TaskFactory)


def register_task(name: str) -> Callable[[F], F]:
    """Register a task factory (a function, or the task class itself) as `name`; the task it
    makes records every option it was made with, defaults included (`seed` aside), as its
    `options`."""

    def add(factory: F) -> F:
        signature = inspect.signature(factory)

        @functools.wraps(factory, updated=())
        def made(*args: Any, **kwargs: Any) -> Task[Any, Any]:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            task = factory(*bound.args, **bound.kwargs)
            task.options = {k: v for k, v in bound.arguments.items() if k != "seed"}
            return task

        TASKS.register(name)(made)
        return factory if isinstance(factory, type) else cast(F, made)

    return add


def takes_option(factory: TaskFactory, option: str) -> bool:
    """Whether a task factory has this option (`--context` goes to those with `context`)."""
    return option in inspect.signature(factory).parameters


class PlanError(ValueError):
    """A task cannot run with this plan (for example, a judged task with no judge)."""
