"""summary.json: the keys of DESIGN.md, no NaN, null with reasons, findings that are planted."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from attunebench.analysis.loading import Run, Runs
from attunebench.analysis.summary import Options, build_summary, summary_json
from attunebench.records import ModelInfo

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


def test_models_scored_on_different_items_are_flagged(
    runs: Runs, load: Callable[..., Runs]
) -> None:
    flagged = build_summary(runs, Options(resamples=100))
    assert any(w.kind == "uneven_items" for w in flagged.warnings)  # failures differ by model
    complete = load({"m/a": TASKS, "m/b": TASKS}, conversations=10)
    even = build_summary(complete, Options(resamples=100))
    assert not any(w.kind == "uneven_items" for w in even.warnings)


def test_records_call_models_by_name_and_run_json_gives_the_kind(runs: Runs) -> None:
    renamed = tuple(r.model_copy(update={"model": "fast"}) if r.model == "baseline/random" else r
                    for r in runs.records)  # fmt: skip
    info = runs.runs[0].info.model_copy(update={"models": [
        ModelInfo(spec="baseline/random", name="fast"), *runs.runs[0].info.models]})
    run = Run(runs.runs[0].path, info, None)
    summary = build_summary(Runs((run,), renamed, runs.conversations), Options(resamples=100))
    entry = next(m for m in summary.provenance.models if m.name == "fast")
    assert (entry.spec, entry.kind) == ("baseline/random", "baseline")
    assert {r.model_kind for r in summary.scores if r.model == "fast"} == {"baseline"}
