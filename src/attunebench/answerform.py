"""What a valid answer to a task looks like, declared once by the task (or the judge) that asks
for it and carried on every `TaskHint` it sends (docs/architecture.md, "A task, declared once").

The providers that stand in for a model ask the form, never the hint kind or the prompt:
`example` (`mock/default`), `random` (`baseline/random`, the stub servers), `from_gold`
(`sim/oracle`; a form that cannot says so in `gold_answers`, and the plan leaves the pair out),
`read_prompt` (servers that see only the messages), `schema` (constrained decoding, accepting
all three writers' answers). This module sits below `models/` and `tasks/`: it imports neither.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from attunebench.registry import Registry

_MENU = re.compile(r"exactly as listed:\s*\n((?:- [^\n]+\n?)+)")
_MENU_ITEM = re.compile(r"^- ([^:\n]+):", re.MULTILINE)
# "from 1 (very poor) to 5 (very good)" or "from 1 to 5"
_SCALE = re.compile(r"from (-?\d+(?:\.\d+)?)(?: \([^)]*\))? to (-?\d+(?:\.\d+)?)")


# The name of an answer form: a task's, or a judge call's. Open: a task declares its own.
HintKind = str


@dataclass(frozen=True, slots=True)
class TaskHint:
    """Structured item content sent alongside every prompt, for providers that cannot read
    prompts (LLM providers ignore it): baselines, the mock and the simulators answer from it, in
    the JSON its `form` declares, so one strict parser reads every provider. `kind` names the
    form (the task's name, or a judge call's `judge_pairwise` / `judge_rubric`): the form's own
    kind where the hint carries one and names no other. `history` is the
    conversation before the item as (role, text) pairs, `reference` what the participant wanted,
    `item_key` the item's address (seeded baselines answer an item alike). `gold` goes only to
    providers that declare `reads_gold` (`sim/`), `subject` (the model a judge is asked about)
    only to the simulated judge. Neither `form`, `task` nor `subject` enters a cache key."""

    kind: HintKind = ""
    text: str = ""
    labels: tuple[str, ...] = ()
    candidates: dict[str, str] = field(default_factory=dict)
    history: tuple[tuple[str, str], ...] = ()
    reference: dict[str, str] = field(default_factory=dict)
    item_key: str = ""
    gold: dict[str, object] | None = None
    # What a valid answer looks like (None: plain text). Not content: kept out of cache keys.
    form: AnswerForm | None = field(default=None, compare=False)
    subject: str = ""
    task: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.kind and self.form is not None:
            object.__setattr__(self, "kind", self.form.kind)

    def schema(self) -> Schema | None:
        """The JSON schema of a valid answer, where the hint's form declares one."""
        return None if self.form is None else self.form.schema(self)


class AnswerForm(ABC):
    """One kind of answer; see the module docstring. `marker` is how the answer's JSON form
    begins where the prompt states it ("in this form: {"behaviors" ...")."""

    kind: ClassVar[str]
    marker: ClassVar[str] = ""
    gold_answers: ClassVar[bool] = True
    # Its hints offer two replies to pick between (`PairAnswers`).
    pairs: ClassVar[bool] = False

    @abstractmethod
    def example(self, hint: TaskHint) -> str: ...

    @abstractmethod
    def random(self, hint: TaskHint, rng: np.random.Generator) -> str: ...

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        raise ValueError(f"a {self.kind!r} answer cannot be written from its gold")

    def schema(self, hint: TaskHint) -> Schema | None:
        """The JSON schema of a valid answer to `hint` (see the module docstring)."""
        return None

    def combine(
        self, golds: Sequence[Mapping[str, Any]], weights: Sequence[float] | None = None
    ) -> dict[str, Any]:
        """One gold standing for several, weighted (equally without `weights`): per field, the
        weighted mode of a label (or a flag), the labels carrying at least half the weight of a
        list of labels (else its heaviest one), the weighted mean of a number; a mapping's
        fields each so (an outcome's values per field). A field a gold lacks, or holds as
        null, leaves it out of that field."""
        return combine_fields(golds, _weights(golds, weights))

    def question(self, hint: TaskHint) -> Hashable:
        """What a train item must share with this one for its gold to stand for this item's
        answer: by default the hint's labels (the same label set, the same rating scale)."""
        return hint.labels

    def reads(self, hint: TaskHint) -> tuple[str, ...]:
        """What a baseline compares items by: by default the hint's text."""
        return (hint.text,)

    def shown(self, hint: TaskHint, gold: Mapping[str, Any]) -> Mapping[str, Any]:
        """The gold in the terms this hint shows it (a pair's replies by the place its query
        shows them in), for golds learned from one query to combine into another's answer;
        showing a shown gold again gives it back. By default the gold itself."""
        return gold

    def labelled(
        self, hint: TaskHint, labels: Sequence[str], sentiment: float | None = None
    ) -> dict[str, Any] | None:
        """The gold of an answer naming these of the hint's labels, strongest first, and
        where the answer rates how the person felt, the `sentiment` read (-1 to 1); None for a
        form whose answer names no labels (this default) or none of these."""
        return None

    def read_prompt(self, system: str, user: str) -> TaskHint | None:
        """The hint a prompt stating this form gives: its kind and the labels it lists."""
        form = re.search(r"in this form:\s*(\{[^\n]*)", system)
        if not self.marker or form is None or not form.group(1).startswith(self.marker):
            return None
        return TaskHint(labels=tuple(menu_labels(system)), form=self)


Schema = dict[str, Any]

FORMS: Registry[AnswerForm] = Registry("answer form")


def registered(form: AnswerForm) -> AnswerForm:
    """`form`, registered under its kind (each task module makes its form once)."""
    return FORMS.register(form.kind)(form)


def dumps(answer: object) -> str:
    return json.dumps(answer)


def pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    return options[int(rng.integers(len(options)))]


def uniform(rng: np.random.Generator, low: float, high: float) -> float:
    """A uniform draw on a scale: whole steps where the scale is of whole numbers."""
    if float(low).is_integer() and float(high).is_integer():
        return float(rng.integers(int(low), int(high) + 1))
    return float(rng.uniform(low, high))


def obj(properties: Mapping[str, Schema], optional: Sequence[str] = ()) -> Schema:
    """An object of exactly these properties, all but `optional` required, in this order (the
    order a constrained server writes them in)."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": [name for name in properties if name not in optional],
        "additionalProperties": False,
    }


NULL: Schema = {"type": "null"}


def one_of(labels: Sequence[str]) -> Schema:
    return {"type": "string", "enum": list(labels)}


def some_of(labels: Sequence[str]) -> Schema:
    """A list of labels; no longer than the menu, so a constrained answer cannot run on."""
    return {"type": "array", "items": one_of(labels), "maxItems": len(labels)}


def in_scale(low: float, high: float, *, whole: bool = False) -> Schema:
    """A number from `low` to `high` (a whole one with `whole`)."""
    return {"type": "integer" if whole else "number", "minimum": low, "maximum": high}


def is_strict(schema: Schema) -> bool:
    """Whether every object in `schema` requires all its properties and allows no others:
    what OpenAI's strict structured outputs take (a server that is not strict still
    constrains, or guides, by the schema)."""
    if schema.get("type") == "object":
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", ())) != set(properties):
            return False
        return all(is_strict(part) for part in properties.values())
    if schema.get("type") == "array":
        return is_strict(schema.get("items", {}))
    return all(is_strict(part) for part in schema.get("anyOf", ()))


def labels_of(hint: TaskHint) -> tuple[str, ...]:
    if not hint.labels:
        raise ValueError(f"the {hint.kind!r} hint carries no labels")
    return hint.labels


def menu_labels(prompt: str) -> list[str]:
    """The label names a prompt lists after "exactly as listed:", in order.

    >>> menu_labels("Write each name exactly as listed:\\n- joy: happy.\\n- fear: scared.\\n")
    ['joy', 'fear']
    """
    block = _MENU.search(prompt)
    return _MENU_ITEM.findall(block.group(1)) if block else []


def stated_scale(text: str) -> tuple[float, float]:
    """The first scale `text` states ("from 1 (...) to 5 (...)"), 1 to 5 if none.

    >>> stated_scale("from 1 (very poor) to 5 (very good)?")
    (1.0, 5.0)
    """
    found = _SCALE.search(text)
    return (float(found.group(1)), float(found.group(2))) if found else (1.0, 5.0)


def labelled_scale(hint: TaskHint) -> tuple[float, float]:
    """The scale (low, high) a hint carries as its two labels (a rating's, a grade's); a
    ValueError where its labels are not two numbers (a hint made by hand)."""
    try:
        low, high = (float(x) for x in hint.labels)
    except ValueError:
        raise ValueError(f"the {hint.kind} hint carries no scale: labels {hint.labels!r}") from None
    return low, high


def _weights(golds: Sequence[Any], weights: Sequence[float] | None) -> list[float]:
    return [1.0] * len(golds) if weights is None else [float(w) for w in weights]


def heaviest_key(totals: Mapping[str, float]) -> str:
    """The key with the most weight; of equal ones the first in sorted order, so a tie is never
    decided by the order of the train file (MultiESC valid's emotions: 51 anxiety, 51
    depression)."""
    return max(sorted(totals), key=totals.__getitem__)  # max keeps the first of ties


def weighted_mode(values: Sequence[Any], weights: Sequence[float]) -> Any:
    """The value with the most weight (ties: `heaviest_key`)."""
    totals: dict[str, float] = {}
    first: dict[str, Any] = {}
    for value, weight in zip(values, weights, strict=True):
        key = json.dumps(value, sort_keys=True)
        totals[key] = totals.get(key, 0.0) + weight
        first.setdefault(key, value)
    return first[heaviest_key(totals)]


def majority_labels(lists: Sequence[Sequence[str]], weights: Sequence[float]) -> list[str]:
    """The labels carrying at least half the weight, heaviest first, else the heaviest one
    (none: none); ties as `heaviest_key`."""
    totals: dict[str, float] = {}
    for labels, weight in zip(lists, weights, strict=True):
        for label in dict.fromkeys(labels):
            totals[label] = totals.get(label, 0.0) + weight
    ranked = sorted(totals, key=lambda label: (-totals[label], label))
    common = [label for label in ranked if 2 * totals[label] >= sum(weights)]
    return common or ranked[:1]


def combine_value(values: Sequence[Any], weights: Sequence[float]) -> Any:
    """One value standing for several (see `AnswerForm.combine`)."""
    if all(isinstance(v, Mapping) for v in values):
        return combine_fields(values, weights)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return sum(float(v) * w for v, w in zip(values, weights, strict=True)) / sum(weights)
    if all(isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v) for v in values):
        return majority_labels(values, weights)
    return weighted_mode(values, weights)


def combine_fields(golds: Sequence[Mapping[str, Any]], weights: Sequence[float]) -> dict[str, Any]:
    """Each field of these golds combined over those that hold it (not null)."""
    fields = dict.fromkeys(name for gold in golds for name in gold)
    out: dict[str, Any] = {}
    for name in fields:
        held = [
            (g[name], w) for g, w in zip(golds, weights, strict=True) if g.get(name) is not None
        ]
        if held and sum(w for _, w in held) > 0:
            out[name] = combine_value([v for v, _ in held], [w for _, w in held])
    return out


def heaviest(
    golds: Sequence[Mapping[str, Any]], weights: Sequence[float] | None = None
) -> dict[str, Any]:
    """The gold with the most weight, whole (the first of equal ones): a text answer cannot be
    averaged."""
    found = _weights(golds, weights)
    return dict(golds[max(range(len(golds)), key=found.__getitem__)])


# A pair's gold as a baseline's combined answer names it: the reply in the first place, or the
# second (shown as A and B in the order "ab").
FIRST, SECOND, TIE = "first", "second", "tie"


def pair_order(hint: TaskHint) -> str:
    """The order a pair's query shows its replies in, from the query key that ends the hint's
    item key: "ab" (the first in the data as A), else "ba"."""
    return "ab" if hint.item_key.rsplit("|", 1)[-1] == "ab" else "ba"


def pair_gold(pick: str) -> dict[str, Any]:
    """A pair's gold naming its replies by place: `pick` is FIRST, SECOND or TIE."""
    return {
        "first": FIRST,
        "second": SECOND,
        "chosen": None if pick == TIE else pick,
        "tie": pick == TIE,
    }


def picked(gold: Mapping[str, Any]) -> str:
    """Which reply a pair's gold prefers, by place (FIRST, SECOND or TIE)."""
    if gold.get("tie") or gold.get("chosen") is None:
        return TIE
    return FIRST if gold["chosen"] == gold["first"] else SECOND


class PairAnswers(AnswerForm):
    """A pick between two replies, `candidates` A and B (each pair asked in both orders): its
    gold names the preferred one. Baselines read both replies, A then B, and learn from each
    order a train pair is asked in, its gold named as that order shows it (`shown`); golds
    combine by a weighted pick of the preferred reply's place (A, B, or a tie)."""

    pairs: ClassVar[bool] = True

    def combine(
        self, golds: Sequence[Mapping[str, Any]], weights: Sequence[float] | None = None
    ) -> dict[str, Any]:
        return pair_gold(weighted_mode([picked(g) for g in golds], _weights(golds, weights)))

    def question(self, hint: TaskHint) -> Hashable:
        return ()

    def reads(self, hint: TaskHint) -> tuple[str, ...]:
        return hint.candidates.get("A", ""), hint.candidates.get("B", "")

    def shown(self, hint: TaskHint, gold: Mapping[str, Any]) -> Mapping[str, Any]:
        """The gold with its first reply the one shown as A: swapped in the order "ba"."""
        if pair_order(hint) == "ab":
            return gold
        return {**gold, "first": gold["second"], "second": gold["first"]}


def gold_pick(hint: TaskHint, gold: Mapping[str, Any], right: bool) -> str:
    """A pair's pick ("A", "B", "tie") from its gold, or a wrong one: the gold names the
    replies shown first and second, and the query key ("ab", "ba") the order asked."""
    a = gold["first"] if pair_order(hint) == "ab" else gold["second"]
    truth = "tie" if gold.get("tie") else ("A" if gold.get("chosen") == a else "B")
    return truth if right else {"A": "B", "B": "A", "tie": "A"}[truth]
