"""Analysis of run directories: cluster-bootstrap scores, rank agreement between tasks,
discriminability, diagnostics, judge agreement and power; `build_summary` makes summary.json."""

from attunebench.analysis.comparisons.power import power_curve
from attunebench.analysis.loading import RunLoadError, load_runs
from attunebench.analysis.schema import Summary
from attunebench.analysis.summary import Options, build_summary, summary_json

__all__ = [
    "Options",
    "RunLoadError",
    "Summary",
    "build_summary",
    "load_runs",
    "power_curve",
    "summary_json",
]
