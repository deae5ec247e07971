"""The simulators page: `simulators.json` rendered as one self-contained HTML page, in words.

A sentence is said only where an interval decides it: a difference whose interval covers 0 is
"no difference shown", never "the same"; one within the run-to-run spread is noise.
"""

from __future__ import annotations

from pathlib import Path

from attunebench.analysis.schema import Estimate, NoisyDifference
from attunebench.data.jsonl import atomic_writer
from attunebench.report.environment import make_environment
from attunebench.simulators.schema import SimulatorsReport

PAGE = "simulators.html"


def _side(found: Estimate, zero: float = 0.0) -> int | None:
    """+1 or -1 where the interval lies wholly above or below `zero`; 0 where it covers it;
    None where there is no interval."""
    if found.ci_low is None or found.ci_high is None:
        return None
    return 1 if found.ci_low > zero else -1 if found.ci_high < zero else 0


def _compared(name: str, found: NoisyDifference, higher: str, lower: str) -> str | None:
    """One sentence on a simulator-minus-people difference."""
    if found.value is None:
        return None
    side = _side(found)
    if found.within_noise:
        return f"{name}: within the simulator's own run-to-run noise"
    if side == 1:
        return f"{name}: {higher} than the people ({found.value:+.3f})"
    if side == -1:
        return f"{name}: {lower} than the people ({found.value:+.3f})"
    shown = "no difference from the people shown" if side == 0 else "too few conversations to say"
    return f"{name}: {shown} ({found.value:+.3f})"


def _replay_lines(report: SimulatorsReport) -> list[str]:
    lines = []
    for task, figure in report.replay.items():
        versus = figure.minus_crowd
        if versus is None or versus.value is None:
            continue
        side = _side(versus)
        said = {
            1: "answers as the person did more often than the crowd's usual answer",
            -1: "answers as the person did less often than the crowd's usual answer",
            0: "does no better than the crowd's usual answer",
        }.get(side if side is not None else 2, "too few conversations to say")
        lines.append(f"replay of {task}: {said} ({figure.metric} {figure.value:.3f})")
    return lines


def verdicts(report: SimulatorsReport) -> list[str]:
    """The figures in plain words (see the module docstring)."""
    realism = report.realism
    lines = _replay_lines(report)
    auroc = realism.auroc
    if auroc.value is not None:
        side = _side(auroc, 0.5)
        told = "can be told from" if side == 1 else "could not be told from"
        lines.append(f"its messages {told} the people's (AUROC {auroc.value:.3f})")
    compared = [
        _compared("negative self-labels", realism.emotion_by_third, "more", "fewer"),
        _compared("intensity change", realism.intensity_change, "a smaller fall", "a larger fall"),
        _compared("thumbs down", realism.negative_feedback_share, "more", "fewer"),
    ]
    lines += [line for line in compared if line]
    rho = report.ranking.spearman
    if rho.value is not None:
        side = _side(rho)
        said = "ranks the models as the people do" if side == 1 else "no agreement shown"
        lines.append(f"ranking of the models: {said} (Spearman {rho.value:.3f})")
    return lines


def render_simulators(report: SimulatorsReport) -> str:
    template = make_environment().get_template(PAGE)
    return template.render(r=report, verdicts=verdicts(report))


def write_simulators_page(report: SimulatorsReport, out: str | Path, name: str = PAGE) -> Path:
    """Write the page into `out` as `name`; returns its path."""
    path = Path(out) / name
    with atomic_writer(path) as handle:
        handle.write(render_simulators(report))
    path.chmod(0o644)  # a page is for reading: not the private mode of a temporary file
    return path
