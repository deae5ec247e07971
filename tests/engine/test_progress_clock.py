"""Who is slow: calls and time per model on the progress line, and one warning naming the model
that took most of the time."""

from __future__ import annotations

import io

from rich.console import Console

from attunebench.engine.ledger import Key, LedgerBook
from attunebench.engine.progress import SLOW_AFTER_S, ModelClock, RunProgress, clock_text
from attunebench.models.base import ModelOutput


def spend(ledger: LedgerBook, model: str, seconds: float, calls: int = 1) -> None:
    for _ in range(calls):
        key: Key = (model, "emotion", "subject")
        ledger.call(key, ModelOutput("", latency_s=seconds / calls), 0.0)


def test_the_model_that_took_most_of_the_time_is_named() -> None:
    ledger = LedgerBook()
    clock = ModelClock(ledger)
    spend(ledger, "baseline/knn", 30.0, calls=10)
    spend(ledger, "baseline/majority", 2.0, calls=10)
    clock.prepared("baseline/majority", 1.0)
    assert clock.per_model() == {"baseline/knn": (10, 30.0), "baseline/majority": (10, 3.0)}
    assert clock.slowest() == ("baseline/knn", 30.0, 33.0)


def test_no_verdict_when_time_is_shared_or_too_short() -> None:
    ledger = LedgerBook()
    clock = ModelClock(ledger)
    spend(ledger, "a", 0.9 * SLOW_AFTER_S)
    spend(ledger, "b", 0.01)
    assert clock.slowest() is None  # one model is nearly all, but of too little time
    spend(ledger, "b", 0.9 * SLOW_AFTER_S)
    assert clock.slowest() is None  # over the threshold, but shared about evenly
    alone = LedgerBook()
    spend(alone, "only", 100.0)
    assert ModelClock(alone).slowest() is None  # a model alone is not "the slow one"


def test_the_warning_comes_once_even_without_a_bar() -> None:
    ledger = LedgerBook()
    said = io.StringIO()
    console = Console(file=said, width=200)
    with RunProgress(10, 0, ledger, enabled=False, console=console) as bar:
        spend(ledger, "baseline/knn", 40.0)
        spend(ledger, "baseline/random", 1.0)
        for _ in range(5):
            bar.advance()
    lines = said.getvalue().splitlines()
    assert len(lines) == 1 and "warning: baseline/knn has taken 98%" in lines[0]


def test_the_progress_text_lists_the_slowest_first() -> None:
    times = {"k": (4, 50.0), "m": (4, 1.0), "r": (4, 0.2), "x": (1, 0.1)}
    assert clock_text(times) == "k 4 calls 50s · m 4 calls 1s · r 4 calls 0s · 1 more"
