"""Named factories: providers, tasks, scorers, judges and metrics register here by name; a
registry refuses duplicates so that a name in a report always means one thing.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`, did you mean 'X'?` for the known name a mistyped one is nearest (difflib's ratio, as
    argparse suggests a choice), or "" when none is that near.

    >>> did_you_mean("minlm", ["minilm", "length"])
    ", did you mean 'minilm'?"
    >>> did_you_mean("gpt", ["minilm"])
    ''
    """
    near = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    return f", did you mean {near[0]!r}?" if near else ""


class RegistryError(KeyError):
    """A name is unknown, or registered twice."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else ""


class Registry(Generic[T]):
    """A mapping from names to factories, refusing duplicates.

    >>> colours: Registry[Callable[[], str]] = Registry("colour")
    >>> @colours.register("red")
    ... def red() -> str:
    ...     return "#f00"
    >>> colours.get("red")()
    '#f00'
    >>> colours.register("red")(red)
    Traceback (most recent call last):
    ...
    attunebench.registry.RegistryError: colour 'red' is already registered
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def add(entry: T) -> T:
            if name in self._entries:
                raise RegistryError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = entry
            return entry

        return add

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            near = did_you_mean(name, self._entries)
            raise RegistryError(f"unknown {self.kind} {name!r}{near} (known: {known})") from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))
