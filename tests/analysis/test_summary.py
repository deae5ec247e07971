"""summary.json: the keys of DESIGN.md, no NaN, null with reasons, findings that are planted."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from attunebench.analysis.loading import Runs
from attunebench.analysis.summary import Options, build_summary, summary_json

TASKS = {"emotion": 0.5, "behavior": 0.6, "preference": 0.55, "response": 0.45}


@pytest.fixture
def runs(load: Callable[..., Runs]) -> Runs:
    accuracy = {f"m/model{i}": {t: p + 0.05 * i for t, p in TASKS.items()} for i in range(4)}
    accuracy["baseline/random"] = {t: 0.3 for t in TASKS}
    return load(accuracy, conversations=30, items_per_conversation=4, invalid_rate=0.05,
                failed_rate=0.05, variants=("blind", "informed"), informed_gain=1.5,
                judge_accuracy=0.75, kinds={"baseline/random": "baseline"})  # fmt: skip


def test_summary_has_the_designed_sections_and_no_nan(runs: Runs) -> None:
    text = summary_json(build_summary(runs, Options(resamples=200)))
    data = json.loads(text)
    for key in ("scores", "rank_correlation", "discriminability", "judge_agreement", "warnings",
                "provenance", "context_modes", "diagnostics"):  # fmt: skip
        assert data[key], key
    row = data["scores"][0]
    for key in ("model", "task", "metric", "value", "ci_low", "ci_high", "n", "n_conversations",
                "n_invalid", "n_failed"):  # fmt: skip
        assert key in row
    assert "NaN" not in text and "Infinity" not in text
    assert data["provenance"]["dataset_sha256"] == [runs.runs[0].info.dataset_sha256]


def test_failed_records_are_counted_never_scored(runs: Runs) -> None:
    summary = build_summary(runs, Options(resamples=100))
    row = next(r for r in summary.scores if r.headline and r.model == "m/model0"
               and r.task == "emotion")  # fmt: skip
    records = [r for r in runs.records if (r.task, r.model, r.variant) == (
        "emotion", "m/model0", "blind")]  # fmt: skip
    failed = sum(r.status == "failed" for r in records)
    assert failed and row.n_failed == failed and row.n == len(records) - failed
    assert any(w.kind == "failed_records" and w.model == "m/model0" for w in summary.warnings)


def test_kinds_and_judges_are_labelled(runs: Runs) -> None:
    summary = build_summary(runs, Options(resamples=100))
    kinds = {m.spec: m.kind for m in summary.provenance.models}
    assert kinds["baseline/random"] == "baseline" and kinds["m/model0"] == "model"
    assert [j.kind for j in summary.provenance.judges] == ["proxy"]
    response = [r for r in summary.scores if r.task == "response"]
    assert all(r.judges == ["proxy/minilm"] for r in response)


def test_the_informed_gain_is_found_per_model(runs: Runs) -> None:
    summary = build_summary(runs, Options(resamples=300))
    gains = [d for d in summary.context_modes if d.task == "emotion"]
    assert len(gains) == 5
    assert all(d.value is not None and d.value > 0 for d in gains)
    assert sum(d.verdict.startswith("informed context helps") for d in gains) >= 4


def test_a_seed_fixes_every_number(runs: Runs) -> None:
    first = summary_json(build_summary(runs, Options(seed=3, resamples=100)))
    again = summary_json(build_summary(runs, Options(seed=3, resamples=100)))
    other = summary_json(build_summary(runs, Options(seed=4, resamples=100)))
    assert first == again and first != other


def test_participant_clusters_need_the_dataset(runs: Runs) -> None:
    summary = build_summary(runs, Options(resamples=100, cluster="participant"))
    assert summary.settings.cluster == "participant"
    with pytest.raises(ValueError, match="needs the dataset"):
        build_summary(Runs(runs.runs, runs.records), Options(cluster="participant"))
