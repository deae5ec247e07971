"""Reading and merging run directories; bad input names file, line and field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from attunebench.analysis.loading import RunLoadError, load_runs

ACCURACY = {"m/a": {"emotion": 0.5}, "m/b": {"emotion": 0.6}}


def test_runs_of_different_models_on_the_same_data_merge(make_run: Callable[..., Path]) -> None:
    first = make_run(ACCURACY, name="first", models=["m/a"])
    second = make_run(ACCURACY, name="second", models=["m/b"])
    runs = load_runs([first, second])
    assert {r.model for r in runs.records} >= {"m/a", "m/b"}
    assert len(runs.runs) == 2 and len(runs.dataset_hashes) == 1
    assert runs.conversations  # the dataset was found and its hash matched
    assert not [n for n in runs.notices if n.kind == "duplicate_records"]


def test_runs_on_different_data_are_refused_unless_allowed(make_run: Callable[..., Path]) -> None:
    first = make_run(ACCURACY, name="first")
    other = make_run(ACCURACY, name="other", conversations=12)
    with pytest.raises(RunLoadError, match="different datasets"):
        load_runs([first, other])
    runs = load_runs([first, other], allow_mixed_datasets=True)
    assert any(n.kind == "mixed_datasets" for n in runs.notices)


def test_the_later_run_replaces_the_same_items(make_run: Callable[..., Path]) -> None:
    first = make_run(ACCURACY, name="first")
    again = make_run(ACCURACY, name="again", seed=0)
    runs = load_runs([first, again])
    assert len(runs.records) == len(load_runs([first]).records)
    assert any(n.kind == "duplicate_records" for n in runs.notices)


def test_a_bad_line_names_its_file_line_and_field(make_run: Callable[..., Path]) -> None:
    run = make_run(ACCURACY)
    lines = (run / "records.jsonl").read_text().splitlines()
    broken = json.loads(lines[2])
    broken["status"] = "maybe"
    lines[2] = json.dumps(broken)
    (run / "records.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(RunLoadError, match=r"records\.jsonl, line 3: status"):
        load_runs([run])


def test_a_folder_that_is_not_a_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RunLoadError, match=r"run\.json is missing"):
        load_runs([tmp_path])


def test_a_changed_dataset_is_not_used(make_run: Callable[..., Path]) -> None:
    run = make_run(ACCURACY)
    with (run / "dataset.jsonl").open("a") as handle:
        handle.write("\n")
    runs = load_runs([run])
    assert not runs.conversations
    assert any(n.kind == "dataset_unavailable" for n in runs.notices)
