"""Who leads each task: planted margins are recovered, yardsticks never lead, equal models are
not called apart, and the interval uses the pairing; with no model under test, the reason says
what to add."""

from __future__ import annotations

from attunebench.analysis import Options, build_summary
from attunebench.analysis.schema import Lead
from planted import synthetic
from planted.synthetic import Plan

FAST = Options(resamples=400, permutations=99)


def emotion_lead(accuracy: dict[str, float], seed: int = 0, **fields: object) -> Lead:
    plan = Plan(
        {name: {"emotion": value} for name, value in accuracy.items()},
        conversations=60,
        items={"emotion": 5},
        seed=seed,
        kinds={name: "baseline" for name in accuracy if name.startswith("baseline/")},
        **fields,  # type: ignore[arg-type]
    )
    summary = build_summary(synthetic.runs(plan, sorted(accuracy)), FAST)
    (lead,) = [lead for lead in summary.leads if lead.task == "emotion"]
    return lead


def test_a_planted_margin_is_recovered_and_a_strong_baseline_never_leads() -> None:
    planted = {"m/a": 0.75, "m/b": 0.55, "m/c": 0.35, "baseline/strong": 0.95}
    found = [emotion_lead(planted, seed) for seed in range(12)]
    assert all(lead.leader == "m/a" and lead.runner_up == "m/b" for lead in found)
    assert all(lead.verdict == "ahead" for lead in found)
    covered = sum(
        lead.ci_low is not None and lead.ci_high is not None and lead.ci_low <= 0.2 <= lead.ci_high
        for lead in found
    )
    assert covered >= 10, covered  # 95% intervals: 11.4 of 12 expected


def test_equal_models_are_not_called_apart() -> None:
    found = [emotion_lead({"m/a": 0.6, "m/b": 0.6, "m/c": 0.3}, seed) for seed in range(12)]
    assert {lead.leader for lead in found} <= {"m/a", "m/b"}
    apart = sum(lead.verdict == "ahead" for lead in found)
    assert apart <= 2, apart  # about 5% expected: the leader is picked as the higher one


def test_the_margin_interval_uses_the_pairing() -> None:
    """Conversations that every model finds hard move both models together: the paired margin
    is narrower than the two models' own intervals combined as if independent."""
    plan = Plan(
        {"m/a": {"emotion": 0.65}, "m/b": {"emotion": 0.55}},
        conversations=60,
        items={"emotion": 5},
        conversation_spread=2.0,
    )
    summary = build_summary(synthetic.runs(plan), FAST)
    (lead,) = summary.leads
    rows = {r.model: r for r in summary.scores if r.task == "emotion" and r.headline and r.subject}
    widths = [(r.ci_high or 0.0) - (r.ci_low or 0.0) for r in rows.values()]
    unpaired = (widths[0] ** 2 + widths[1] ** 2) ** 0.5
    assert lead.ci_low is not None and lead.ci_high is not None
    assert lead.ci_high - lead.ci_low < 0.8 * unpaired


def test_no_model_under_test_says_what_to_add() -> None:
    only_yardsticks = emotion_lead({"baseline/a": 0.5, "baseline/b": 0.4})
    assert only_yardsticks.leader is None and only_yardsticks.value is None
    assert "no model under test" in str(only_yardsticks.reason)
    assert "--include-simulated" in str(only_yardsticks.reason)
    both = {"emotion": 0.9, "preference": 0.9}
    plan = Plan({"sim/oracle": both, "baseline/a": both}, conversations=8)
    excluded = build_summary(synthetic.runs(plan), FAST)
    assert "add --include-simulated to check the machinery" in str(excluded.leads[0].reason)
    # the rank agreement counts models, not conversations, and says the same
    pair_reason = excluded.rank_correlation.reason or ""
    assert "only 0 conversations" not in pair_reason and "--include-simulated" in pair_reason
    included = build_summary(
        synthetic.runs(plan), Options(resamples=100, permutations=99, include_simulated=True)
    )
    assert included.leads[0].leader == "sim/oracle"
    assert included.leads[0].reason == "one model under test: no runner-up"
