"""summary.json: its sections, no NaN, null with reasons, findings that are planted, and no
interval or verdict where the data cannot support one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from attunebench.analysis.loading import Run, Runs, load_runs
from attunebench.analysis.schema import Estimate
from attunebench.analysis.summary import Options, build_summary, summary_json
from attunebench.records import ModelInfo
from planted import synthetic
from planted.synthetic import Plan, write_run

TASKS = {"emotion": 0.5, "behavior": 0.6, "preference": 0.55, "response": 0.45}
UNCERTAIN = ("ci_low", "ci_high", "p_value", "p_holm", "verdict")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """One run directory, written and loaded once: no test changes it (they build new Runs)."""
    accuracy = {f"m/model{i}": {t: p + 0.05 * i for t, p in TASKS.items()} for i in range(4)}
    accuracy["baseline/random"] = {t: 0.3 for t in TASKS}
    plan = Plan(
        accuracy,
        conversations=30,
        items_per_conversation=4,
        invalid_rate=0.05,
        failed_rate=0.05,
        variants=("blind", "informed"),
        informed_gain=1.5,
        judge_accuracy=0.75,
        kinds={"baseline/random": "baseline"},
    )
    return load_runs([write_run(tmp_path_factory.mktemp("summary") / "run", plan)])


def test_summary_has_the_designed_sections_and_no_nan(runs: Runs) -> None:
    text = summary_json(build_summary(runs, Options(resamples=200, permutations=999)))
    data = json.loads(text)
    assert data["format"] == "attunebench-summary/v2"
    for key in (
        "scores",
        "rank_correlation",
        "judge_agreement",
        "warnings",
        "provenance",
        "context_modes",
        "diagnostics",
        "left_out_items",
        "leads",
    ):
        assert data[key], key
    assert set(data["discriminability"]) == {"tasks", "ratios"}
    row = data["scores"][0]
    for key in ("model", "task", "metric", "value", "ci_low", "ci_high", "n", "n_conversations"):
        assert key in row
    assert "NaN" not in text and "Infinity" not in text
    assert data["provenance"]["dataset_sha256"] == [runs.runs[0].info.dataset_sha256]
    assert data["provenance"]["status"] == "complete"


def test_failed_records_are_counted_never_scored(runs: Runs) -> None:
    summary = build_summary(runs, Options(resamples=100, permutations=99))
    row = next(
        r for r in summary.scores if r.headline and r.model == "m/model0" and r.task == "emotion"
    )
    mine = [
        r for r in runs.records if (r.task, r.model, r.variant) == ("emotion", "m/model0", "blind")
    ]
    failed = sum(r.status == "failed" for r in mine)
    # scored on the items every model under test answered (an invalid answer is an answer);
    # the baseline's failures take none away
    answered: dict[tuple[str, int], int] = {}
    for r in runs.records:
        if (r.task, r.variant) == ("emotion", "blind") and r.status != "failed":
            key = (r.conversation_id, r.turn_index)
            answered[key] = answered.get(key, 0) + r.model.startswith("m/")
    common = sum(count == 4 for count in answered.values())
    assert failed and row.n_failed == failed and row.n == common < len(mine) - failed
    assert any(w.kind == "failed_records" and w.model == "m/model0" for w in summary.warnings)


def test_kinds_judges_and_the_banner_are_labelled(runs: Runs) -> None:
    summary = build_summary(runs, Options(resamples=100, permutations=99))
    kinds = {m.spec: m.kind for m in summary.provenance.models}
    assert kinds["baseline/random"] == "baseline" and kinds["m/model0"] == "model"
    assert [j.kind for j in summary.provenance.judges] == ["proxy"]
    response = [r for r in summary.scores if r.task == "response"]
    assert all(r.judges == ["proxy/minilm"] for r in response)
    assert not any(r.subject for r in summary.scores if r.model == "baseline/random")
    assert any("simulated data" in line for line in summary.provenance.banner)
    preference = next(t for t in summary.tasks if t.name == "preference")
    assert preference.provenance == ["simulated"]


def test_pairs_ordered_from_ratings_are_derived_whoever_gave_the_ratings(runs: Runs) -> None:
    def derived(record: Any) -> Any:
        if record.task != "preference":
            return record
        return record.model_copy(update={"gold": {**(record.gold or {}), "derived": True}})

    ordered = Runs(runs.runs, tuple(derived(r) for r in runs.records), runs.conversations)
    summary = build_summary(ordered, Options(resamples=50, permutations=99))
    preference = next(t for t in summary.tasks if t.name == "preference")
    assert preference.provenance == ["derived"] and preference.derived_share == 1.0


def test_the_informed_gain_is_found_per_model_and_baselines_get_no_verdict(runs: Runs) -> None:
    summary = build_summary(runs, Options(resamples=300, permutations=99))
    gains = {d.model: d for d in summary.context_modes if d.task == "emotion"}
    assert len(gains) == 5
    models = [d for name, d in gains.items() if name.startswith("m/")]
    assert all(d.value is not None and d.value > 0 for d in models)
    assert sum(str(d.verdict).startswith("informed context helps") for d in models) >= 3
    baseline = gains["baseline/random"]
    assert baseline.verdict is None and "a yardstick, not a model under test" in str(
        baseline.reason
    )


def test_a_seed_fixes_every_number(runs: Runs) -> None:
    def text(seed: int) -> str:
        return summary_json(build_summary(runs, Options(seed=seed, resamples=100, permutations=99)))

    first, again, other = text(3), text(3), text(4)
    assert first == again and first != other


def models_in(value: Any) -> Iterator[BaseModel]:
    """Every pydantic object in a summary, the summary included."""
    if isinstance(value, BaseModel):
        yield value
        for name in type(value).model_fields:
            yield from models_in(getattr(value, name))
    elif isinstance(value, list | tuple | dict):
        for inner in value.values() if isinstance(value, dict) else value:
            yield from models_in(inner)


def test_every_interval_is_an_estimate_whose_keys_stand_in_its_row(runs: Runs) -> None:
    summary = build_summary(runs, Options(resamples=100, permutations=99))
    with_interval = [m for m in models_in(summary) if "ci_low" in type(m).model_fields]
    assert len({type(m) for m in with_interval}) >= 5  # scores, correlations, leads, ...
    assert all(isinstance(m, Estimate) for m in with_interval)
    row = json.loads(summary_json(summary))["scores"][0]
    assert list(row)[:5] == ["value", "ci_low", "ci_high", "reason", "model"]


def test_participant_clusters_need_the_conversations(runs: Runs) -> None:
    options = Options(resamples=100, permutations=99, cluster="participant")
    summary = build_summary(runs, options)
    assert summary.settings.cluster == "participant"
    with pytest.raises(ValueError, match="needs the dataset"):
        build_summary(Runs(runs.runs, runs.records), options)


def test_records_call_models_by_name_and_run_json_gives_the_kind(runs: Runs) -> None:
    renamed = tuple(
        r.model_copy(update={"model": "fast"}) if r.model == "baseline/random" else r
        for r in runs.records
    )
    info = runs.runs[0].info
    models = [ModelInfo(spec="baseline/random", name="fast"), *info.models]
    run = Run(runs.runs[0].path, info.model_copy(update={"models": models}), None)
    summary = build_summary(
        Runs((run,), renamed, runs.conversations), Options(resamples=100, permutations=99)
    )
    entry = next(m for m in summary.provenance.models if m.name == "fast")
    assert (entry.spec, entry.kind) == ("baseline/random", "baseline")
    assert {r.model_kind for r in summary.scores if r.model == "fast"} == {"baseline"}


def test_an_incomplete_run_says_how_incomplete(runs: Runs) -> None:
    run = runs.runs[0]
    unfinished = Run(run.path, run.info.model_copy(update={"complete": False}), None, 1234)
    summary = build_summary(
        Runs((unfinished,), runs.records, runs.conversations), Options(resamples=100)
    )
    planned = run.info.planned_items
    expected = f"run incomplete: 1,234 of {planned:,} planned items"
    assert summary.provenance.status == expected
    assert summary.warnings[0].kind == "incomplete_run"


# --- too few conversations: no interval, no verdict, anywhere --------------------------------


def uncertain_fields(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every interval end, p-value and verdict in a JSON document, with its path."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in UNCERTAIN:
                yield f"{path}.{key}", inner
            yield from uncertain_fields(inner, f"{path}.{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from uncertain_fields(inner, f"{path}[{i}]")


@pytest.mark.parametrize("conversations", [1, 4])
def test_too_few_conversations_give_no_interval_and_no_verdict(conversations: int) -> None:
    accuracy = {f"m/model{i}": {t: 0.2 + 0.15 * i for t in TASKS} for i in range(4)}
    plan = Plan(
        accuracy,
        conversations=conversations,
        items_per_conversation=6,
        variants=("blind", "informed"),
        informed_gain=2.0,
        judge_accuracy=0.8,
    )
    summary = build_summary(synthetic.runs(plan), Options(resamples=200, permutations=99))
    data = json.loads(summary_json(summary))
    given = [(path, value) for path, value in uncertain_fields(data) if value is not None]
    assert given == []
    reason = summary.warnings[0]
    assert reason.kind == "too_few_conversations"
    assert (
        f"only {conversations} conversation" in reason.message and "fewer than 10" in reason.message
    )
    # the point values are still there, each with the reason
    scored = [r for r in summary.scores if r.value is not None]
    why = f"only {conversations} conversation"
    assert scored and all(r.reason and r.reason.startswith(why) for r in scored)
    pairs = summary.rank_correlation.pairs
    assert pairs and all(p.verdict_text.startswith("no verdict") for p in pairs)
    assert all(d.reason for d in summary.context_modes)
    assert all(d.snr.reason for d in summary.discriminability.tasks if d.snr.value is not None)


def test_ten_conversations_give_intervals() -> None:
    accuracy = {f"m/model{i}": {t: 0.2 + 0.15 * i for t in TASKS} for i in range(4)}
    plan = Plan(accuracy, conversations=10, items_per_conversation=6)
    summary = build_summary(synthetic.runs(plan), Options(resamples=200, permutations=99))
    assert not any(w.kind == "too_few_conversations" for w in summary.warnings)
    assert all(r.ci_low is not None for r in summary.scores if r.headline)


# --- nothing scored ------------------------------------------------------------------------


def test_a_run_where_every_item_failed_says_so_with_the_reasons() -> None:
    accuracy = {f"m/model{i}": dict(TASKS) for i in range(3)}
    runs = synthetic.runs(Plan(accuracy, conversations=8, failed_rate=1.0))
    summary = build_summary(runs, Options(resamples=100, permutations=99))
    first = summary.warnings[0]
    assert first.kind == "no_scored_items"
    assert first.message.startswith("no scored items") and "synthetic outage" in first.message
    headline = [r for r in summary.scores if r.headline]
    assert headline and all(r.value is None and r.reason == "no scored items" for r in headline)
    assert all(r.n == 0 and r.n_failed == 40 for r in headline)
    assert any(w.kind == "failed_records" for w in summary.warnings)
    assert summary.rank_correlation.reason is not None
    assert all(d.snr.value is None for d in summary.discriminability.tasks)


def test_the_minimum_is_per_task_not_per_run() -> None:
    # A 60-conversation run in which behavior was asked in 3 conversations only: behavior's
    # numbers rest on 3 conversations, so they get no interval, no verdict and no ratio, while
    # the other tasks keep theirs, the same as without behavior.
    accuracy = {f"m/model{i}": {t: 0.2 + 0.12 * i for t in TASKS} for i in range(5)}
    runs = synthetic.runs(Plan(accuracy, conversations=60, items_per_conversation=3))
    kept = sorted(runs.conversations)[:3]
    sparse = Runs(
        runs.runs,
        tuple(r for r in runs.records if r.task != "behavior" or r.conversation_id in kept),
        runs.conversations,
    )
    without = Runs(
        runs.runs, tuple(r for r in runs.records if r.task != "behavior"), runs.conversations
    )
    options = Options(resamples=300, permutations=199)
    summary, reference = build_summary(sparse, options), build_summary(without, options)
    short = "only 3 conversations with scored items (fewer than 10): no interval and no verdict"
    behavior = [r for r in summary.scores if r.task == "behavior" and r.value is not None]
    assert behavior and all(r.ci_low is None and r.reason == short for r in behavior)
    others = [r for r in summary.scores if r.task != "behavior" and r.headline]
    assert others and all(r.ci_low is not None for r in others)
    assert [r for r in reference.scores if r.headline] == others
    for pair in summary.rank_correlation.pairs:
        if "behavior" in (pair.task_a, pair.task_b):
            assert pair.verdict is None and pair.spearman.ci_low is None
            assert pair.verdict_text == f"no verdict: behavior: {short}"
        else:
            assert pair.verdict is not None and pair.spearman.ci_low is not None
    (reliability,) = [r for r in summary.rank_correlation.reliability if r.task == "behavior"]
    assert reliability.ci_low is None and reliability.reason == short
    found = {d.task: d for d in summary.discriminability.tasks}
    assert found["behavior"].snr.ci_low is None and found["behavior"].snr.reason == short
    assert found["emotion"].snr.ci_low is not None
    for ratio in summary.discriminability.ratios:
        shown = ratio.ci_low is not None or ratio.ci_high is not None
        assert shown != ("behavior" in (ratio.task_a, ratio.task_b)), ratio.statement
    (notice,) = [w for w in summary.warnings if w.kind == "too_few_conversations"]
    assert notice.task == "behavior" and notice.message == f"behavior (blind): {short}"
