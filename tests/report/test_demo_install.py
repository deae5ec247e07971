"""`make demo` installs only the core and the `ml` and `lexicon` extras: the demo must run with
nothing else importable (the run itself is `demo_harness.run_demo`, shared with test_demo)."""

from __future__ import annotations

import json

import pytest
from demo_harness import DemoRun


@pytest.mark.slow
def test_the_demo_runs_with_only_the_demo_extras(demo: DemoRun) -> None:
    site = demo.site
    withheld_packages = ("pydantic_settings", "fastapi", "sqlalchemy", "inspect_ai", "datasets")
    for withheld in (*withheld_packages, "pyarrow", "textblob", "nltk"):
        assert not (site / withheld).exists()  # the extras the demo does without are absent
    assert (site / "torch").exists() and (site / "sentence_transformers").exists()
    assert demo.done.returncode == 0, f"{demo.done.stdout}\n{demo.done.stderr}"
    summary = json.loads((demo.out / "summary.json").read_text())
    assert summary["scores"], "the demo scored nothing"
