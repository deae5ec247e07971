"""The simulators page: `report DIR` of a validation folder renders simulators.html, with the
figures in plain words only where an interval decides them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from markupsafe import escape
from validating import Validate

from attunebench.analysis.resampled import Resampled, Resampler
from attunebench.analysis.schema import NoisyDifference
from attunebench.cli import report as report_command
from attunebench.report.simulators import verdicts
from attunebench.simulators import SIMULATORS_FILE

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from cli_harness import attunebench, one_clear_line


def test_report_of_a_validation_folder_renders_its_page(
    validated: Validate, corpus: Path, tmp_path: Path
) -> None:
    report = validated(corpus, "sim/person-oracle?calm=0.5")
    folder = tmp_path / "validated"
    ran = attunebench("report", folder, "--out", tmp_path / "page")
    assert ran.exit_code == 0, ran.output
    page = (tmp_path / "page" / "simulators.html").read_text()
    assert "Simulated users: sim/person-oracle?calm=0.5" in page
    for task in report.replay:
        assert f"<td>{task}</td>" in page
    said = verdicts(report)
    assert "intensity change: a larger fall than the people" in " ".join(said)
    assert all(str(escape(line)) in page for line in said)
    (folder / SIMULATORS_FILE).write_text('{"format": "attunebench-simulators/v1"}')
    one_clear_line(attunebench("report", folder, "--out", tmp_path / "again"), "simulators.json")


def test_the_cli_names_the_file_the_package_writes() -> None:
    assert report_command.SIMULATORS_FILE == SIMULATORS_FILE


@pytest.mark.parametrize(
    ("value", "noise", "within"), [(0.01, 0.02, True), (0.03, 0.02, False), (0.0, 0.0, False)]
)
def test_a_difference_smaller_than_the_noise_floor_is_noise(
    value: float, noise: float, within: bool
) -> None:
    resampler = Resampler.over(["a", "b", "c"], 100, seed=0)
    found = Resampled(value, np.full(100, value), 3)
    assert resampler.difference(found, noise).within_noise is within
    assert isinstance(resampler.difference(found, None), NoisyDifference)
