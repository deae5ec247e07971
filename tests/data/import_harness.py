"""Shared by the importer tests: run an importer, validate what it wrote, read it back."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from attunebench.data import Conversation, read_conversations
from attunebench.data.importers import Importer, ImportResult, import_to_file
from attunebench.data.validate import validate_file


def imported(
    importer: Importer, source: Path, out: Path, *, limit: int | None = None
) -> tuple[list[Conversation], ImportResult]:
    """Import into `out`; fail unless the dataset validator accepts every line."""
    result = import_to_file(importer, source, out, limit=limit)
    report = validate_file(out)
    assert report.ok, "\n".join(str(problem) for problem in report.problems[:20])
    conversations = read_conversations(out)
    assert len(conversations) == result.written
    assert len({c.id for c in conversations}) == len(conversations)
    return conversations, result


def prefixed(tally: Counter[str], prefix: str) -> dict[str, int]:
    """The tally's `prefix:value` counts as {value: count}."""
    return {
        key.removeprefix(prefix + ":"): n
        for key, n in tally.items()
        if key.startswith(prefix + ":")
    }


def lines(text: str | None) -> int:
    """How many utterances a merged message holds (merges join utterances with newlines)."""
    return 0 if text is None else text.count("\n") + 1


def message_lines(conversations: list[Conversation]) -> tuple[int, int]:
    """(user utterances, other-side utterances) recovered from merged messages and openings."""
    user = sum(lines(t.user) for c in conversations for t in c.turns)
    other = sum(lines(c.context.opening) for c in conversations)
    other += sum(lines(r.text) for c in conversations for t in c.turns for r in t.responses)
    return user, other
