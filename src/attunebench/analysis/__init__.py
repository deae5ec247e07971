"""Analysis of run directories: cluster-bootstrap scores, rank agreement between tasks,
discriminability, diagnostics, judge agreement and power; `build_summary` makes summary.json."""

from attunebench.analysis.bootstrap import ClusterBootstrap, paired_difference, percentile_interval
from attunebench.analysis.comparisons.power import PowerCurve, power_curve
from attunebench.analysis.loading import RunLoadError, Runs, load_runs
from attunebench.analysis.schema import SUMMARY_FORMAT, Summary
from attunebench.analysis.summary import Options, build_summary, summary_json

__all__ = [
    "SUMMARY_FORMAT",
    "ClusterBootstrap",
    "Options",
    "PowerCurve",
    "RunLoadError",
    "Runs",
    "Summary",
    "build_summary",
    "load_runs",
    "paired_difference",
    "percentile_interval",
    "power_curve",
    "summary_json",
]
