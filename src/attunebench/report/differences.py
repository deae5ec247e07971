"""What `report --compare A,B` shows: per task, a's headline minus b's on the same items.

One view for the HTML page, the markdown leaderboard and the terminal, so the three say the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from attunebench.analysis.schema import ModelDifference, Summary
from attunebench.report.environment import DASH, number


@dataclass(frozen=True)
class DifferenceLine:
    """One task and pair, as shown: the difference signed, its interval or why there is none."""

    task: str
    metric: str
    variant: str
    pair: str  # "a − b"
    sides: str  # each model's headline: "0.812 − 0.640"
    difference: str  # "+0.172", or a dash
    interval: str  # "[+0.090, +0.251]", or why there is none
    n: int
    clusters: int
    gold: str  # who gave the gold


def difference_lines(summary: Summary, gold: Mapping[str, str]) -> list[DifferenceLine]:
    """Every asked pair on every task, by pair (as asked) then task; `gold`: who gave its gold."""
    asked = list(dict.fromkeys((d.a, d.b) for d in summary.differences))
    found = sorted(summary.differences, key=lambda d: (asked.index((d.a, d.b)), d.task))
    return [_line(d, gold.get(d.task, "undeclared")) for d in found]


def _line(found: ModelDifference, gold: str) -> DifferenceLine:
    if found.ci_low is not None and found.ci_high is not None:
        shown = f"[{found.ci_low:+.3f}, {found.ci_high:+.3f}]"
    else:
        shown = found.reason or ""
    return DifferenceLine(
        task=found.task,
        metric=found.metric,
        variant=found.variant,
        pair=f"{found.a} − {found.b}",
        sides=f"{number(found.a_value)} − {number(found.b_value)}",
        difference=DASH if found.value is None else f"{found.value:+.3f}",
        interval=shown,
        n=found.n,
        clusters=found.n_clusters,
        gold=gold,
    )


def computed_from(summary: Summary) -> str:
    """What every difference was computed from: the seeds, resamples and data digests."""
    settings, made = summary.settings, summary.provenance
    runs = ", ".join(str(run.seed) for run in made.runs)
    data = ", ".join(digest[:12] for digest in made.dataset_sha256)
    return (
        f"seed {settings.seed}; {settings.resamples} paired resamples by {settings.cluster}, "
        f"{100 * settings.confidence:.0f}% intervals; run seed {runs}; data sha256 {data}"
    )
