"""A rich progress bar for a run, on stderr and only on a terminal: items done, ETA, the
ledger's calls, hits, failures and cost (read when the bar redraws, so counting costs the
engine nothing), the batches, and each model's calls and time, slowest first. Once one model
has taken most of the time, a warning names it, bar or no bar: a run waits on its slowest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

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
from attunebench.records import Tally

Batches = Callable[[], BatchCounts | None]
SLOW_AFTER_S = 10.0  # no verdict on who is slow before the models have spent this much time
SLOW_SHARE = 2 / 3  # "most of the time": clearly more than the others together, not 51%
SHOWN_MODELS = 3


class ModelClock:
    """Calls and seconds per model this session: the ledger's latencies and each preparation."""

    def __init__(self, ledger: LedgerBook) -> None:
        self._ledger = ledger
        self._prepared: dict[str, float] = {}

    def prepared(self, model: str, seconds: float) -> None:
        self._prepared[model] = self._prepared.get(model, 0.0) + seconds

    def per_model(self) -> dict[str, tuple[int, float]]:
        """(calls, seconds) of each model, slowest first."""
        tallies = self._ledger.session_by_model()
        found = {}
        for m in set(tallies) | set(self._prepared):
            tally = tallies.get(m, Tally())
            found[m] = (tally.calls, tally.latency_s + self._prepared.get(m, 0.0))
        return dict(sorted(found.items(), key=lambda item: -item[1][1]))

    def slowest(self) -> tuple[str, float, float] | None:
        """(model, its seconds, all models' seconds) once one model took most of the time."""
        times = self.per_model()
        total = sum(seconds for _, seconds in times.values())
        if len(times) < 2 or total < SLOW_AFTER_S:
            return None
        model, (_, seconds) = next(iter(times.items()))
        return (model, seconds, total) if seconds > SLOW_SHARE * total else None


def clock_text(times: dict[str, tuple[int, float]], shown: int = SHOWN_MODELS) -> str:
    """
    >>> clock_text({"baseline/knn": (40, 95.2), "baseline/majority": (40, 0.4)})
    'baseline/knn 40 calls 95s · baseline/majority 40 calls 0s'
    """
    parts = [f"{m} {calls} calls {seconds:.0f}s" for m, (calls, seconds) in times.items()]
    more = len(parts) - shown
    return " · ".join(parts[:shown]) + (f" · {more} more" if more > 0 else "")


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


def terminal_bar(console: Console, enabled: bool, *extra: ProgressColumn) -> Progress:
    """The house bar (description, bar, done of planned, ETA, then `extra`) on `console`;
    drawing nothing when disabled or not on a terminal (pipes and CI get no bar)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        *extra,
        console=console,
        disable=not (enabled and console.is_terminal),
    )


@dataclass(eq=False)
class TextOf(ProgressColumn):
    """A column that shows `text()` as it is when the bar redraws."""

    text: Callable[[], str]
    style: str

    def __post_init__(self) -> None:
        super().__init__()

    def render(self, task: Task) -> Text:
        return Text(self.text(), style=self.style, no_wrap=True, overflow="ellipsis")


def ledger_text(ledger: LedgerBook) -> str:
    t = ledger.totals()
    return f"calls {t.calls} hits {t.cache_hits} failed {t.failures} ${t.cost_usd:.4f}"


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
        self.clock = ModelClock(ledger)
        self._warned = False
        self._progress = terminal_bar(
            console,
            enabled,
            TextOf(lambda: ledger_text(ledger), "cyan"),
            *([TextOf(lambda: batch_text(batches()), "magenta")] if batches is not None else []),
            TextOf(lambda: clock_text(self.clock.per_model()), "yellow"),
        )
        self._task = self._progress.add_task("", total=total, completed=done)
        self._console = console

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def advance(self) -> None:
        self._progress.advance(self._task)
        self._warn_if_slow()

    def prepared(self, model: str, seconds: float) -> None:
        """A model's preparation took `seconds`: part of its time."""
        self.clock.prepared(model, seconds)
        self._warn_if_slow()

    def _warn_if_slow(self) -> None:
        if self._warned:
            return
        slow = self.clock.slowest()
        if slow is not None:
            self._warned = True
            model, seconds, total = slow
            self.note(
                f"warning: {model} has taken {seconds / total:.0%} of the models' time so far "
                f"({seconds:.0f} s of {total:.0f} s); the run waits on it"
            )

    def describe(self, text: str) -> None:
        """Show `text` before the bar ("" for none); safe from any thread."""
        self._progress.update(self._task, description=text)

    def note(self, text: str) -> None:
        """A line on stderr, above the bar if there is one."""
        self._console.print(text, markup=False, highlight=False, soft_wrap=True)

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
