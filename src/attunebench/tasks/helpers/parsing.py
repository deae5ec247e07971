"""Strict answer parsing: one JSON object (bare, fenced or in prose), checked field by field;
anything else raises `InvalidAnswer`. Label case and listed synonyms are forgiven. A choice
answer (the options' probabilities) never fails to parse."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from attunebench.data.schema import TaxonomyLabel
from attunebench.data.taxonomy import normalise_label
from attunebench.tasks.base import InvalidAnswer

Choice = Literal["A", "B", "tie"]
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_CHOICES: dict[str, Choice] = {"a": "A", "b": "B", "tie": "tie"}
# Object starts tried in prose. A failed try costs time in the length of the text (json's error
# position), so an output of a million "{" must not be a million tries.
_MAX_STARTS = 100


def _storable(value: Any) -> Any:
    """`value` with half UTF-16 pairs in its strings made U+FFFD: json decodes a "\ud800"
    escape into one, and no UTF-8 file (records.jsonl) can hold it."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_storable(item) for item in value]
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    return value


def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in `text`: the whole text, a fenced block, or embedded in prose."""
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to be an answer
            continue
        if isinstance(value, dict):
            return cast(dict[str, Any], _storable(value))
    decoder = json.JSONDecoder()
    for tried, match in enumerate(re.finditer(r"\{", text)):
        if tried == _MAX_STARTS:
            raise InvalidAnswer(f"no JSON object in the first {_MAX_STARTS} '{{' of the output")
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return cast(dict[str, Any], _storable(value))
    raise InvalidAnswer("no JSON object found in the output")


def answer_fields(text: str) -> dict[str, Any]:
    """The answer's JSON object, its keys matched without regard to case ("Primary" is
    "primary"); values are not."""
    return {str(key).strip().lower(): value for key, value in extract_json(text).items()}


def one_label(raw: object, allowed: Sequence[TaxonomyLabel], what: str) -> str:
    if not isinstance(raw, str):
        raise InvalidAnswer(f"{what} must be a label (a string), got {raw!r}")
    name = normalise_label(raw, tuple(allowed))
    if name is None:
        raise InvalidAnswer(f"{what} {raw!r} is not one of the allowed labels")
    return name


def label_list(raw: object, allowed: Sequence[TaxonomyLabel], what: str) -> tuple[str, ...]:
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise InvalidAnswer(f"{what} must be a list of labels, got {raw!r}")
    named = (one_label(item, allowed, what) for item in items)
    return tuple(dict.fromkeys(named))  # de-duplicated, order kept


def bounded_number(raw: object, low: float, high: float, what: str) -> float | None:
    """A number in [low, high], or None for null; anything else is invalid."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise InvalidAnswer(f"{what} must be a number or null, got {raw!r}")
    if not low <= raw <= high:
        raise InvalidAnswer(f"{what} {raw!r} is outside {low:g}..{high:g}")
    return float(raw)


def a_b_tie(raw: object, what: str) -> Choice:
    key = raw.strip().lower() if isinstance(raw, str) else None
    if key is None or key not in _CHOICES:
        raise InvalidAnswer(f'{what} must be "A", "B" or "tie", got {raw!r}')
    return _CHOICES[key]


def reason_of(found: dict[str, Any]) -> str:
    reason = found.get("reason", "")
    return reason if isinstance(reason, str) else json.dumps(reason)


def parse_choice(text: str) -> Choice:
    found = answer_fields(text)
    if "choice" not in found:
        raise InvalidAnswer("the answer has no 'choice'")
    return a_b_tie(found["choice"], "choice")


def most_probable(probabilities: Mapping[str, float], labels: Mapping[str, str]) -> str:
    """The label of the most probable key (ties: the key listed first)."""
    keys = list(probabilities)
    key = max(keys, key=lambda k: (probabilities[k], -keys.index(k)))
    return labels[key]


def expected_value(probabilities: Mapping[str, float], values: Mapping[str, float]) -> float:
    """The mean of the keys' values under their probabilities (renormalised over the keys)."""
    total = sum(probabilities.values())
    return sum(p * values[k] for k, p in probabilities.items()) / total
