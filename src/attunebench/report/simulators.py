"""The simulators page: `simulators.json` rendered as one self-contained HTML page, in words.

A sentence is said only where an interval decides it: a difference whose interval covers 0 is
"no difference shown", never "the same"; one within the run-to-run spread is noise.
"""

from __future__ import annotations

from pathlib import Path

from attunebench.analysis.schema import NoisyDifference
from attunebench.data.jsonl import atomic_writer
from attunebench.report.environment import make_environment
from attunebench.simulators.schema import SimulatorsReport

PAGE = "simulators.html"


def _compared(name: str, found: NoisyDifference, higher: str, lower: str) -> str | None:
    """One sentence on a simulator-minus-people difference."""
    if found.value is None:
        return None
    side = found.side()
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
        side = versus.side()
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
        told = "can be told from" if auroc.side(0.5) == 1 else "could not be told from"
        lines.append(f"its messages {told} the people's (AUROC {auroc.value:.3f})")
    compared = [
        _compared("negative self-labels", realism.emotion_by_third, "more", "fewer"),
        _compared("intensity change", realism.intensity_change, "a smaller fall", "a larger fall"),
        _compared("thumbs down", realism.negative_feedback_share, "more", "fewer"),
    ]
    lines += [line for line in compared if line]
    rho = report.ranking.spearman
    if rho.value is not None:
        said = "ranks the models as the people do" if rho.side() == 1 else "no agreement shown"
        lines.append(f"ranking of the models: {said} (Spearman {rho.value:.3f})")
    return lines


def write_simulators_page(report: SimulatorsReport, out: str | Path, name: str = PAGE) -> Path:
    """Write the page into `out` as `name`; returns its path."""
    path = Path(out) / name
    with atomic_writer(path) as handle:
        page = make_environment().get_template(PAGE)
        handle.write(page.render(r=report, verdicts=verdicts(report)))
    path.chmod(0o644)  # a page is for reading: not the private mode of a temporary file
    return path
