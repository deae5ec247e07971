"""A rich progress bar for a run: items done, ETA, and live calls, cache hits, failures, cost
(retries are in the ledger), and for batch models the batches submitted, in progress and done.

It draws on stderr and only on a terminal; `--no-progress`, pipes and CI get no bar. The
figures come straight from the ledger when the bar redraws (ten times a second), so counting a
call costs the engine nothing extra. Before the first call it says what a slow preparation is
doing (`describe`); `note` prints a line whether or not a bar is shown (what an interrupted
run waits for).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from attunebench.engine.caller import BoundModel
from attunebench.engine.ledger import LedgerBook
from attunebench.models.base import BatchCounts

Batches = Callable[[], BatchCounts | None]


def batch_counts(models: Iterable[BoundModel]) -> BatchCounts | None:
    """The batches of every batch model of a run together; None if no model batches."""
    counts = [c for m in models if (c := m.provider.batch_counts()) is not None]
    return sum(counts, BatchCounts()) if counts else None


def batch_text(counts: BatchCounts | None) -> str:
    """
    >>> batch_text(BatchCounts(queued=5, submitted=3, in_progress=2, done=1))
    'batches 3 submitted, 2 in progress, 1 done, 5 queued'
    """
    if counts is None:
        return ""
    return (
        f"batches {counts.submitted} submitted, {counts.in_progress} in progress, "
        f"{counts.done} done, {counts.queued} queued"
    )


class _LedgerColumn(ProgressColumn):
    def __init__(self, ledger: LedgerBook) -> None:
        super().__init__()
        self._ledger = ledger

    def render(self, task: Task) -> Text:
        t = self._ledger.totals()
        return Text(
            f"calls {t.calls} hits {t.cache_hits} failed {t.failures} ${t.cost_usd:.4f}",
            style="cyan",
            no_wrap=True,
            overflow="ellipsis",
        )


class _BatchColumn(ProgressColumn):
    def __init__(self, batches: Batches) -> None:
        super().__init__()
        self._batches = batches

    def render(self, task: Task) -> Text:
        return Text(batch_text(self._batches()), style="magenta", no_wrap=True)


class RunProgress:
    """`with RunProgress(...) as bar: bar.advance()`; does nothing when disabled."""

    def __init__(
        self,
        total: int,
        done: int,
        ledger: LedgerBook,
        *,
        enabled: bool,
        console: Console | None = None,
        batches: Batches | None = None,
    ) -> None:
        console = console or Console(stderr=True)
        self._progress: Progress | None = None
        if enabled and console.is_terminal:
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(bar_width=20),
                MofNCompleteColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                _LedgerColumn(ledger),
                *([_BatchColumn(batches)] if batches is not None else []),
                console=console,
            )
            self._task = self._progress.add_task("", total=total, completed=done)
        self._console = console

    def __enter__(self) -> RunProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def advance(self) -> None:
        if self._progress is not None:
            self._progress.advance(self._task)

    def describe(self, text: str) -> None:
        """Show `text` before the bar ("" for none); safe from any thread."""
        if self._progress is not None:
            self._progress.update(self._task, description=text)

    def note(self, text: str) -> None:
        """A line on stderr, above the bar if there is one."""
        self._console.print(text, markup=False, highlight=False, soft_wrap=True)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
