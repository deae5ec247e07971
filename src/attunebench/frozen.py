"""The one base class of every on-disk record and report model: frozen and strict.

Frozen, so a record read from disk cannot be changed by whoever holds it; `extra="forbid"`, so
a misspelt or unknown field is an error naming the field rather than silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class Frozen(BaseModel):
    """Immutable, and strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def problem_text(problem: Mapping[str, Any]) -> str:
    """What one of pydantic's error entries says, without the prefix it puts before a
    validator's own words (`Value error, `, `Assertion failed, `): the words are ours.

    >>> problem_text({"msg": "Value error, scale min (5) must be below max (1)"})
    'scale min (5) must be below max (1)'
    """
    message = str(problem["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    return message


def first_problem(error: ValidationError, whole: str = "") -> tuple[str, str]:
    """The first problem pydantic found: the field it names, dotted (`whole` where it is the
    whole value), and what it says (`problem_text`)."""
    problem = error.errors()[0]
    return ".".join(str(part) for part in problem["loc"]) or whole, problem_text(problem)
