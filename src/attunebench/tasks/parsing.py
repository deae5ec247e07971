"""Strict answer parsing: one JSON object, found in the output, checked field by field.

Every prompt asks for one JSON object. The parser accepts it bare, in a fenced code block
(```json ... ```), or embedded in surrounding prose; label case and the taxonomy's listed
synonyms are forgiven (`normalise_label`). Anything else (no object, a missing field, a label
outside the item's label set, a number out of range) raises `InvalidAnswer`, which a task turns
into an `invalid` record that keeps the raw output. Nothing is guessed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from attunebench.data.schema import TaxonomyLabel
from attunebench.data.taxonomy import normalise_label

Choice = Literal["A", "B", "tie"]
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_CHOICES: dict[str, Choice] = {"a": "A", "b": "B", "tie": "tie"}
# Object starts tried in prose. A failed try costs time in the length of the text (json's error
# position), so an output of a million "{" must not be a million tries.
_MAX_STARTS = 100


class InvalidAnswer(ValueError):
    """The output is not an answer of the kind asked for; the message says why."""


@dataclass(frozen=True, slots=True)
class EmotionAnswer:
    primary: str
    emotions: tuple[str, ...]
    intensity: float | None
    valence: float | None
    arousal: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "primary": self.primary,
            "emotions": list(self.emotions),
            "intensity": self.intensity,
            "valence": self.valence,
            "arousal": self.arousal,
        }


@dataclass(frozen=True, slots=True)
class PairwiseVerdict:
    winner: Choice
    reason: str


@dataclass(frozen=True, slots=True)
class RubricVerdict:
    score: float
    reason: str


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


def _storable_object(value: dict[str, Any]) -> dict[str, Any]:
    return {_storable(key): _storable(item) for key, item in value.items()}


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
            return _storable_object(value)
    decoder = json.JSONDecoder()
    for tried, match in enumerate(re.finditer(r"\{", text)):
        if tried == _MAX_STARTS:
            raise InvalidAnswer(f"no JSON object in the first {_MAX_STARTS} '{{' of the output")
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return _storable_object(value)
    raise InvalidAnswer("no JSON object found in the output")


def _fields(text: str) -> dict[str, Any]:
    # Keys are matched without regard to case ("Primary" is "primary"); values are not.
    return {str(key).strip().lower(): value for key, value in extract_json(text).items()}


def _label(raw: object, labels: Sequence[TaxonomyLabel], what: str) -> str:
    if not isinstance(raw, str):
        raise InvalidAnswer(f"{what} must be a label (a string), got {raw!r}")
    name = normalise_label(raw, tuple(labels))
    if name is None:
        raise InvalidAnswer(f"{what} {raw!r} is not one of the allowed labels")
    return name


def _labels(raw: object, labels: Sequence[TaxonomyLabel], what: str) -> tuple[str, ...]:
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise InvalidAnswer(f"{what} must be a list of labels, got {raw!r}")
    named = (_label(item, labels, what) for item in items)
    return tuple(dict.fromkeys(named))  # de-duplicated, order kept


def _number(raw: object, low: float, high: float, what: str) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise InvalidAnswer(f"{what} must be a number or null, got {raw!r}")
    if not low <= raw <= high:
        raise InvalidAnswer(f"{what} {raw!r} is outside {low:g}..{high:g}")
    return float(raw)


def _choice(raw: object, what: str) -> Choice:
    key = raw.strip().lower() if isinstance(raw, str) else None
    if key is None or key not in _CHOICES:
        raise InvalidAnswer(f"{what} must be \"A\", \"B\" or \"tie\", got {raw!r}")
    return _CHOICES[key]


def _reason(fields: dict[str, Any]) -> str:
    reason = fields.get("reason", "")
    return reason if isinstance(reason, str) else json.dumps(reason)


def parse_emotion(text: str, labels: Sequence[TaxonomyLabel]) -> EmotionAnswer:
    fields = _fields(text)
    if fields.get("primary") is None:
        raise InvalidAnswer("the answer has no primary emotion")
    primary = _label(fields["primary"], labels, "primary emotion")
    listed = fields.get("emotions")
    emotions = () if listed is None else _labels(listed, labels, "emotion")
    return EmotionAnswer(
        primary=primary,
        emotions=tuple(dict.fromkeys((primary, *emotions))),
        intensity=_number(fields.get("intensity"), 1, 5, "intensity"),
        valence=_number(fields.get("valence"), -1, 1, "valence"),
        arousal=_number(fields.get("arousal"), 0, 1, "arousal"),
    )


def parse_behaviors(text: str, labels: Sequence[TaxonomyLabel]) -> tuple[str, ...]:
    fields = _fields(text)
    if "behaviors" not in fields:
        raise InvalidAnswer("the answer has no 'behaviors' list")
    return _labels(fields["behaviors"], labels, "behavior")


def parse_choice(text: str) -> Choice:
    fields = _fields(text)
    if "choice" not in fields:
        raise InvalidAnswer("the answer has no 'choice'")
    return _choice(fields["choice"], "choice")


def parse_pairwise(text: str) -> PairwiseVerdict:
    fields = _fields(text)
    if "winner" not in fields:
        raise InvalidAnswer("the verdict has no 'winner'")
    return PairwiseVerdict(_choice(fields["winner"], "winner"), _reason(fields))


def parse_rubric(text: str) -> RubricVerdict:
    fields = _fields(text)
    score = _number(fields.get("score"), 1, 10, "score")
    if score is None:
        raise InvalidAnswer("the verdict has no 'score'")
    return RubricVerdict(score, _reason(fields))


def parse_reply(text: str) -> str:
    reply = text.strip()
    if not reply:
        raise InvalidAnswer("the reply is empty")
    return reply
