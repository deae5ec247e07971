"""The one base class of every on-disk record and report model: frozen and strict.

Frozen, so a record read from disk cannot be changed by whoever holds it; `extra="forbid"`, so
a misspelt or unknown field is an error naming the field rather than silently dropped.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Immutable, and strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")
