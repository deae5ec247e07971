"""A report built from a synthetic run whose texts and names try to inject markup; the demo run
once with only its own packages (demo_harness)."""

from __future__ import annotations

from pathlib import Path

import pytest
from demo_harness import DemoRun, run_demo

from attunebench.analysis import Options, Summary, build_summary, load_runs
from planted.synthetic import Plan, write_run

HOSTILE = 'm/<img src=x onerror="alert(1)">|pipe'


def hostile_plan() -> Plan:
    accuracy = {
        f"m/model{i}": {
            "emotion": 0.3 + 0.1 * i,
            "behavior": 0.4,
            "preference": 0.5,
            "response": 0.6 - 0.1 * i,
        }
        for i in range(3)
    }
    accuracy[HOSTILE] = {"emotion": 0.2, "behavior": 0.3, "preference": 0.4, "response": 0.3}
    accuracy["baseline/random"] = {
        "emotion": 0.1,
        "behavior": 0.2,
        "preference": 0.5,
        "response": 0.2,
    }
    return Plan(
        accuracy,
        conversations=24,
        items_per_conversation=4,
        invalid_rate=0.05,
        failed_rate=0.02,
        variants=("blind", "informed"),
        informed_gain=0.4,
        judge_accuracy=0.7,
        kinds={"baseline/random": "baseline"},
    )


@pytest.fixture(scope="session")
def hostile_name() -> str:
    """A model name made of markup and table syntax."""
    return HOSTILE


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run(tmp_path_factory.mktemp("report") / "run", hostile_plan())


@pytest.fixture(scope="session")
def summary(run_dir: Path) -> Summary:
    return build_summary(load_runs([run_dir]), Options(resamples=300, permutations=999))


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """`attunebench demo` run once with only the demo's packages (see demo_harness)."""
    return run_demo(tmp_path_factory.mktemp("demo"))
