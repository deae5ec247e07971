"""What a valid answer to a task looks like, declared once by the task that asks for it.

A task (or the judge, for its verdicts) makes one `AnswerForm` and hands it to every
`TaskHint` it sends. The providers that stand in for a model ask the form, never the hint
kind or the prompt:

- `example`: a fixed valid answer (`mock/default`);
- `random`: a valid answer drawn from `rng` (`baseline/random`, the test stub servers);
- `from_gold`: the gold's answer, or a wrong one drawn from `rng` (`sim/oracle`); a form that
  cannot write one says so in `gold_answers`, and the plan leaves the pair out.
- `read_prompt`: the hint a model could read off the task's rendered prompt, for servers that
  see only the messages (`testing.answers`); None when the prompt is not this form's;
- `schema`: the JSON schema of a valid answer (labels from the hint's taxonomy, numbers in
  their scale), for a server that constrains its decoding to it (`json_schema = true` in the
  models file); None for plain text. It accepts every answer the three writers above produce.

Forms register by hint kind in `FORMS`, so a server that sees only messages can find them.
This module sits below `models/` and `tasks/`: it imports neither.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from attunebench.registry import Registry

if TYPE_CHECKING:
    from attunebench.models.hints import TaskHint

_MENU = re.compile(r"exactly as listed:\s*\n((?:- [^\n]+\n?)+)")
_MENU_ITEM = re.compile(r"^- ([^:\n]+):", re.MULTILINE)
# "from 1 (very poor) to 5 (very good)" or "from 1 to 5"
_SCALE = re.compile(r"from (-?\d+(?:\.\d+)?)(?: \([^)]*\))? to (-?\d+(?:\.\d+)?)")


class AnswerForm(ABC):
    """One kind of answer; see the module docstring. `marker` is how the answer's JSON form
    begins where the prompt states it ("in this form: {"behaviors" ...")."""

    kind: ClassVar[str]
    marker: ClassVar[str] = ""
    gold_answers: ClassVar[bool] = True

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

    def read_prompt(self, system: str, user: str) -> TaskHint | None:
        """The hint a prompt stating this form gives: its kind and the labels it lists."""
        from attunebench.models.hints import TaskHint

        form = re.search(r"in this form:\s*(\{[^\n]*)", system)
        if not self.marker or form is None or not form.group(1).startswith(self.marker):
            return None
        return TaskHint(kind=self.kind, labels=tuple(menu_labels(system)), form=self)


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


def labelled_scale(hint: TaskHint) -> tuple[float, float] | None:
    """The scale (low, high) a hint carries as its two labels (a rating's), None where its
    labels are not two numbers."""
    try:
        low, high = (float(x) for x in hint.labels)
    except ValueError:
        return None
    return low, high


def gold_pick(hint: TaskHint, gold: Mapping[str, Any], right: bool) -> str:
    """A pair's pick ("A", "B", "tie") from its gold, or a wrong one: the gold names the
    replies shown first and second, and the query key ("ab", "ba") the order asked."""
    order = hint.item_key.rsplit("|", 1)[-1]
    a = gold["first"] if order == "ab" else gold["second"]
    truth = "tie" if gold.get("tie") else ("A" if gold.get("chosen") == a else "B")
    return truth if right else {"A": "B", "B": "A", "tie": "A"}[truth]
