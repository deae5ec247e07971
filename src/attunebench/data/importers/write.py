"""Run an importer into a JSON Lines file: atomically, optionally limited, counting as it goes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path

from attunebench.data.importers._base import Importer, ImportOptionError, Tally
from attunebench.data.jsonl import write_conversations
from attunebench.data.schema import Conversation


@dataclass(frozen=True)
class ImportResult:
    written: int
    tally: Tally = field(default_factory=Counter)

    def _prefixed(self, prefix: str) -> dict[str, int]:
        return {
            key.removeprefix(prefix): n
            for key, n in sorted(self.tally.items())
            if key.startswith(prefix) and n
        }

    def dropped(self) -> dict[str, int]:
        """What the corpus had that the format could not hold, by what it was."""
        return self._prefixed("dropped:")

    def warnings(self) -> dict[str, int]:
        """What looks wrong in the corpus but was imported anyway, and how often."""
        return self._prefixed("warning:")

    def notes(self) -> dict[str, int]:
        """What the import did that a reader should know (rows merged, ...)."""
        return self._prefixed("note:")


def import_to_file(
    importer: Importer,
    source: Path,
    out: Path,
    *,
    limit: int | None = None,
    on_conversation: Callable[[Conversation], None] | None = None,
) -> ImportResult:
    """Write what `importer` reads from `source` (the first `limit` conversations) to `out`; a
    failure, or a source holding no conversation, leaves `out` as it was."""
    tally: Tally = Counter()
    conversations: Iterator[Conversation] = islice(importer.read(source, tally), limit)
    first = next(conversations, None)
    if first is None:  # an empty output would replace `out` and then fail validation
        raise ImportOptionError(f"{source}: no conversation to import{_why(tally)}")
    conversations = chain([first], conversations)
    if on_conversation is not None:
        conversations = _observed(conversations, on_conversation)
    written = write_conversations(out, conversations)
    return ImportResult(written=written, tally=tally)


def _why(tally: Tally) -> str:
    """What the import left out, as the reason nothing was imported."""
    left = ImportResult(0, tally).dropped()
    return "" if not left else " (" + "; ".join(f"{n} {what}" for what, n in left.items()) + ")"


def _observed(
    conversations: Iterator[Conversation], observe: Callable[[Conversation], None]
) -> Iterator[Conversation]:
    for item in conversations:
        observe(item)
        yield item
