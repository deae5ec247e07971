"""Diagnostics: confusion, per-label F1, turn position, intensity, subgroups and the model x
subgroup interaction, worst items."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import f1_score

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.breakdowns.diagnostics import (
    ScoredItems,
    binned_scores,
    confusion,
    label_f1,
    label_sets,
    position_bins,
    worst_items,
)
from attunebench.analysis.breakdowns.subgroups import (
    Field,
    _interaction,
    _p_value,
    _per_level,
    _shuffled,
    memberships,
    pooled,
    welch_p_values,
)
from attunebench.analysis.cells import build_cell
from attunebench.analysis.frame import Frame
from attunebench.analysis.loading import Runs
from attunebench.analysis.multiplicity import holm
from attunebench.analysis.schema import Summary
from attunebench.analysis.summary import Options, build_summary
from attunebench.records import ItemRecord
from attunebench.tasks.emotion import EmotionGold, EmotionPrediction
from planted import synthetic
from planted.synthetic import Plan

OPTIONS = Options(resamples=200, permutations=99, subgroup_permutations=500)


def emotion(i: int, gold: str, predicted: str | None, status: str = "ok") -> ItemRecord:
    prediction = EmotionPrediction(primary=predicted, emotions=(predicted,)) if predicted else None
    return ItemRecord(
        task="emotion",
        model="m/a",
        conversation_id="c1",
        turn_index=i,
        item_id="turn",
        variant="blind",
        status=status,  # type: ignore[arg-type]
        prediction=prediction.model_dump(mode="json") if prediction else None,
        gold=EmotionGold(primary=gold, emotions=(gold,)).model_dump(mode="json"),
        score=float(predicted == gold),
    )


def test_confusion_counts_gold_rows_against_predicted_columns_and_invalid() -> None:
    records = [
        emotion(0, "joy", "joy"),
        emotion(1, "joy", "anger"),
        emotion(2, "anger", "anger"),
        emotion(3, "anger", None, status="invalid"),
    ]
    frame = Frame.from_records(records)
    (matrix,) = confusion(frame, build_cell(frame, "emotion", "blind", all_items=False))
    assert matrix.labels == ["anger", "joy"]
    assert matrix.predicted == ["anger", "joy", "invalid"]
    assert matrix.counts == [[1, 0, 1], [1, 1, 0]]


def test_label_sets_keep_each_labelled_items_model_beside_its_labels() -> None:
    # Planted: two models over ten turns, turns 2 and 5 with a gold of numbers alone (no
    # label: left out), model b invalid at turn 7 and without a label at turn 8. Expected, by
    # hand per model, read off the records themselves. A trap: items left out between the
    # labelled ones, so that a model or status read at the wrong position moves a count.
    records = []
    for model in ("m/a", "m/b"):
        for i in range(10):
            guess = None if (model, i) == ("m/b", 8) else ("joy" if i % 3 else "anger")
            status = "invalid" if (model, i) == ("m/b", 7) else "ok"
            record = emotion(i, "joy" if i % 2 else "anger", guess, status)
            if i in (2, 5):
                record = record.model_copy(update={"gold": {"valence": 0.5}})
            records.append(record.model_copy(update={"model": model}))
    frame = Frame.from_records(records)
    cell = build_cell(frame, "emotion", "blind", all_items=False)
    found = label_sets(frame, cell)
    assert len(found.sets) == len(found.records) == len(found.models) == 16
    assert frame.turn[found.records].tolist() == 2 * [0, 1, 3, 4, 6, 7, 8, 9]
    by_model = {m.model: m for m in confusion(frame, cell, found)}
    for model in ("m/a", "m/b"):
        expected: Counter[tuple[str, str]] = Counter()
        for r in records:
            if r.model == model and r.gold and r.gold.get("primary"):
                column = r.status if r.status == "invalid" else (r.prediction or {}).get("primary")
                expected[r.gold["primary"], column or "none"] += 1
        matrix = by_model[model]
        counted = {
            (gold, column): count
            for gold, row in zip(matrix.labels, matrix.counts, strict=True)
            for column, count in zip(matrix.predicted, row, strict=True)
            if count
        }
        assert counted == dict(expected)
    assert by_model["m/b"].predicted == ["anger", "joy", "none", "invalid"]
    support = {(row.model, row.label): row.support for row in label_f1(frame, cell, found)}
    assert support == {
        ("m/a", "anger"): 4,
        ("m/a", "joy"): 4,
        ("m/b", "anger"): 4,
        ("m/b", "joy"): 4,
    }


def test_per_label_f1_matches_scikit_learn() -> None:
    runs = synthetic.runs(Plan({"m/a": {"emotion": 0.5}}, conversations=20))
    frame = Frame.from_records(runs.records)
    rows = label_f1(frame, build_cell(frame, "emotion", "blind", all_items=False))
    gold = [str((r.gold or {})["primary"]) for r in runs.records]
    guess = [str((r.prediction or {})["primary"]) for r in runs.records]
    labels = sorted({row.label for row in rows})
    expected = f1_score(gold, guess, labels=labels, average=None, zero_division=np.nan)
    for row, value in zip(sorted(rows, key=lambda r: r.label), expected, strict=True):
        assert row.f1 == pytest.approx(value, nan_ok=True)
        assert row.support == gold.count(row.label)


def test_turn_positions_are_thirds_of_the_conversation() -> None:
    records = [emotion(i, "joy", "joy") for i in range(9)]
    bins = position_bins(Frame.from_records(records), {})
    assert bins.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_holm_matches_a_hand_computed_case() -> None:
    assert holm([0.01, 0.02, 0.03, 0.5]) == pytest.approx([0.04, 0.06, 0.06, 0.5])
    assert holm([]) == []


def test_a_planted_subgroup_gap_is_found_and_small_groups_are_not_compared() -> None:
    plan = Plan(
        {"m/a": {"emotion": 0.5}},
        conversations=60,
        items_per_conversation=5,
        sources=("easy",) * 25 + ("hard",) * 30 + ("tiny",) * 5,
    )
    runs = synthetic.runs(plan)
    easy = {c.id for c in runs.conversations.values() if c.source.name == "easy"}
    boosted = tuple(
        r.model_copy(update={"score": 1.0}) if r.conversation_id in easy else r
        for r in runs.records
    )
    summary = build_summary(Runs(runs.runs, boosted, runs.conversations), OPTIONS)
    rows = {(g.group, g.level): g for g in summary.diagnostics.subgroups}
    found = rows["source.name", "easy"]
    assert found.value == 1.0 and found.p_holm is not None and found.p_holm < 0.05
    tiny = rows["source.name", "tiny"]
    assert tiny.p_value is None and tiny.reason and "no verdict" in tiny.reason  # 5 < 10
    assert any(w.kind == "small_subgroup" and "tiny" in w.message for w in summary.warnings)
    assert ("context.topic", "work") in rows  # the conversation's topic is a subgroup field


def summary_with_b_failing_on_hard(models: tuple[str, ...]) -> Summary:
    """Equal models on two sources, except that m/b fails every item on the "hard" one."""
    plan = Plan({m: {"emotion": 0.6} for m in models}, conversations=60, sources=("easy", "hard"))
    runs = synthetic.runs(plan)
    hard = {c.id for c in runs.conversations.values() if c.source.name == "hard"}
    broken = tuple(
        r.model_copy(update={"score": 0.0}) if r.model == "m/b" and r.conversation_id in hard else r
        for r in runs.records
    )
    return build_summary(Runs(runs.runs, broken, runs.conversations), OPTIONS)


def test_a_planted_interaction_names_the_model_and_level() -> None:
    summary = summary_with_b_failing_on_hard(("m/a", "m/b", "m/c"))
    found = {i.group: i for i in summary.diagnostics.interactions}
    source = found["source.name"]
    assert source.p_value is not None and source.p_value < 0.01
    # it names the model and the level where the gap is, never the mirror image ("m/b at
    # easy: +0.2", where m/b did nothing wrong)
    assert source.largest is not None
    assert source.largest.startswith("m/b against the other models' mean: easy ")
    assert source.largest.endswith("its gap is lowest at hard")
    gaps = dict(
        part.split(" ") for part in source.largest.split(": ")[1].split("; ")[0].split(", ")
    )
    assert abs(float(gaps["easy"])) < 0.2 and float(gaps["hard"]) < -0.4
    topic = found["context.topic"]  # unrelated to the failure
    assert topic.p_value is not None and topic.p_value > 0.01


def test_binned_scores_read_a_cells_scored_items_once_per_binning() -> None:
    # Planted: two models over 12 turns in 4 conversations, scores by hand; m/b failed at turn
    # 5, and another variant's records (m/c, informed) in the same frame. Known answer: each
    # model's mean per bin as read off the records themselves. A trap: the failed record, the
    # other variant's and the items of no bin (turn 0) must all stay out.
    records = []
    for model, variant in (("m/a", "blind"), ("m/b", "blind"), ("m/c", "informed")):
        for i in range(12):
            record = emotion(i, "joy", "joy" if (i * 7 + len(model)) % 3 else "anger")
            update: dict[str, object] = {
                "model": model,
                "variant": variant,
                "conversation_id": f"c{i % 4}",
            }
            if (model, i) == ("m/b", 5):
                update.update(status="failed", score=None, prediction=None)
            records.append(record.model_copy(update=update))
    frame = Frame.from_records(records)
    cell = build_cell(frame, "emotion", "blind", all_items=True)
    scored = ScoredItems.of(frame, cell)
    read = zip(scored.model.tolist(), frame.turn[scored.rows].tolist(), strict=True)
    assert [(frame.models[m], t) for m, t in read] == [
        (r.model, r.turn_index) for r in records if r.variant == "blind" and r.status == "ok"
    ]
    turns = frame.turn[scored.rows]
    bins = np.where(turns == 0, -1, turns % 3)
    bootstrap = ClusterBootstrap.create(np.arange(4), 50, np.random.default_rng(1))
    minimum = Minimum(2, "conversation", bootstrap.cluster_of)
    found = binned_scores(frame, bootstrap, scored, "third", ("a", "b", "c"), bins, minimum)
    expected: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in records:
        if r.variant == "blind" and r.status == "ok" and r.turn_index > 0:
            expected[r.model, "abc"[r.turn_index % 3]].append(float(r.score or 0.0))
    assert {(g.model, g.level): g.n for g in found} == {k: len(v) for k, v in expected.items()}
    for g in found:
        assert g.value == pytest.approx(np.mean(expected[g.model, g.level]))
    assert {g.model: g.task for g in found} == {"m/a": "emotion", "m/b": "emotion"}


def test_turn_position_and_intensity_views_have_intervals_and_counts() -> None:
    plan = Plan({"m/a": {"emotion": 0.5}}, conversations=30, items_per_conversation=6)
    summary = build_summary(synthetic.runs(plan), OPTIONS)
    positions = summary.diagnostics.turn_position
    assert {g.level for g in positions} == {"early", "middle", "late"}
    assert sum(g.n for g in positions) == 180  # every item in one bin
    intensities = {g.level for g in summary.diagnostics.intensity}
    assert intensities <= {"low (1-2)", "medium (3)", "high (4-5)"}
    assert all(
        g.ci_low is not None and g.ci_low <= (g.value or 0) <= (g.ci_high or 0) for g in positions
    )


def test_worst_items_come_lowest_first_with_the_turn_text() -> None:
    runs = synthetic.runs(Plan({"m/a": {"emotion": 0.5}, "m/b": {"emotion": 0.5}}))
    frame = Frame.from_records(runs.records)
    cell = build_cell(frame, "emotion", "blind", all_items=False)
    worst = worst_items(frame, cell, runs.conversations, limit=3)
    means = [w.mean_score for w in worst]
    assert means == sorted(means) and len(worst) == 3
    assert worst[0].text is not None and "conversation" in worst[0].text
    assert {a.model for a in worst[0].answers} == {"m/a", "m/b"}
    per_item: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in runs.records:
        per_item[r.conversation_id, r.turn_index].append(r.score or 0.0)
    assert means[0] == pytest.approx(min(np.mean(v) for v in per_item.values()))


def test_worst_items_are_the_cells_lowest_means_ties_in_order_of_first_appearance() -> None:
    # Planted: two models' answers at six turns, turn 3's records first, so that it is seen
    # before turn 1; right answers per turn (of 2): 2, 0, 1, 0, 1, 2. Known answer: turns 3
    # and 1 (mean 0, in order of first appearance), then 2 and 4 (0.5). A trap: the informed
    # variant's records, every one wrong, hold the same items and must not lower their means.
    right = {0: 2, 1: 0, 2: 1, 3: 0, 4: 1, 5: 2}
    records = []
    for turn in (3, 0, 1, 2, 4, 5):
        for n, model in enumerate(("m/a", "m/b")):
            guess = "joy" if n < right[turn] else "anger"
            blind = emotion(turn, "joy", guess).model_copy(update={"model": model})
            informed = emotion(turn, "joy", "anger").model_copy(
                update={"model": model, "variant": "informed"}
            )
            records += [informed, blind]
    frame = Frame.from_records(records)
    cell = build_cell(frame, "emotion", "blind", all_items=False)
    worst = worst_items(frame, cell, {}, limit=4)
    assert [(w.turn_index, w.mean_score) for w in worst] == [(3, 0.0), (1, 0.0), (2, 0.5), (4, 0.5)]
    assert all([a.model for a in w.answers] == ["m/a", "m/b"] for w in worst)
    assert worst[2].answers[0].score == 1.0 and worst[2].answers[1].score == 0.0


def test_with_two_models_the_interaction_names_the_one_that_fails_and_where() -> None:
    # two models, the same except that m/b fails every item on "hard": the deviations from
    # each model's own average are mirror images (m/a at easy, m/b at hard), and the largest
    # one named m/a at easy; the gap between them is at hard, where m/b is behind
    summary = summary_with_b_failing_on_hard(("m/a", "m/b"))
    (source,) = [i for i in summary.diagnostics.interactions if i.group == "source.name"]
    assert source.p_value is not None and source.p_value < 0.01
    assert source.largest is not None and source.largest.startswith("m/b against")
    assert source.largest.endswith("its gap is lowest at hard")


# Subgroup tests that can be significant, on the models under test only ------------------------


def test_the_subgroup_test_is_welchs_t_test_with_one_item_per_conversation() -> None:
    rng = np.random.default_rng(5)
    codes = np.array([0] * 14 + [1] * 11 + [2] * 9)
    scores = rng.normal(0.5 + 0.2 * (codes == 0), 0.3)
    field = Field("f", ("a", "b", "c"), codes, np.arange(len(codes)), codes[None, :])
    p = welch_p_values(field, scores[:, None], np.ones((len(codes), 1)))
    for level in range(3):
        inside = codes == level
        expected = stats.ttest_ind(scores[inside], scores[~inside], equal_var=False).pvalue
        assert p[level, 0] == pytest.approx(expected, rel=1e-9)


def test_a_strong_effect_survives_the_reports_family_and_yardsticks_are_not_tested() -> None:
    # Planted truth: m/a scores 0.9 on "easy" conversations and 0.1 elsewhere; the other models
    # and the baselines are flat. A permutation floor of 1/2001 times hundreds of comparisons
    # left such an effect short of significance; a parametric p-value does not.
    models = {f"m/model{i}": {"emotion": 0.5} for i in range(4)}
    models |= {f"baseline/b{i}": {"emotion": 0.3} for i in range(4)}
    plan = Plan(
        models,
        conversations=80,
        items_per_conversation=5,
        sources=("easy", "hard"),
        kinds={f"baseline/b{i}": "baseline" for i in range(4)},
    )
    runs = synthetic.runs(plan)
    rng = np.random.default_rng(0)
    easy = {c.id for c in runs.conversations.values() if c.source.name == "easy"}

    def planted(record: ItemRecord) -> ItemRecord:
        if record.model != "m/model0" or record.score is None:
            return record
        chance = 0.9 if record.conversation_id in easy else 0.1
        return record.model_copy(update={"score": float(rng.random() < chance)})

    records = tuple(planted(r) for r in runs.records)
    summary = build_summary(Runs(runs.runs, records, runs.conversations), OPTIONS)
    rows = summary.diagnostics.subgroups
    tested = [g for g in rows if g.p_value is not None]
    assert tested and all(g.model.startswith("m/") for g in tested)
    yardsticks = [g for g in rows if g.model.startswith("baseline/")]
    assert yardsticks and all(g.p_value is None and g.p_holm is None for g in yardsticks)
    assert all(g.reason and "yardstick" in g.reason for g in yardsticks)
    found = next(
        g for g in tested if (g.model, g.group, g.level) == ("m/model0", "source.name", "easy")
    )
    assert found.p_holm is not None and found.p_holm < 0.05
    assert found.p_value is not None and found.p_value * 667 < 0.05  # the audit's family size
    # the trap: flat models are not found to differ anywhere
    flat = [g for g in tested if g.model != "m/model0"]
    assert sum(g.p_holm is not None and g.p_holm < 0.05 for g in flat) == 0


def test_rare_levels_are_pooled_into_other_instead_of_skipping_the_field() -> None:
    # two big sources and three rare ones (5 conversations each, under the 10 needed): the
    # interaction is tested on big-1, big-2 and "other"; m/b fails on big-2
    sources = ("big-1",) * 25 + ("big-2",) * 25 + ("rare-1", "rare-2", "rare-3") * 5
    plan = Plan(
        {m: {"emotion": 0.6} for m in ("m/a", "m/b", "m/c")}, conversations=65, sources=sources
    )
    runs = synthetic.runs(plan)
    hard = {c.id for c in runs.conversations.values() if c.source.name == "big-2"}
    broken = tuple(
        r.model_copy(update={"score": 0.0}) if r.model == "m/b" and r.conversation_id in hard else r
        for r in runs.records
    )
    summary = build_summary(Runs(runs.runs, broken, runs.conversations), OPTIONS)
    (source,) = [i for i in summary.diagnostics.interactions if i.group == "source.name"]
    assert source.levels == ["big-1", "big-2", "other"] and source.reason is None
    assert source.p_value is not None and source.p_value < 0.01
    assert source.largest is not None and source.largest.endswith("its gap is lowest at big-2")
    recode, names = pooled(("a", "b", "c", "d"), np.array([12, 3, 4, 30]), 10)
    assert names == ("a", "d") and recode.tolist() == [0, -1, -1, 1, -1]  # "other" too small


def test_the_interaction_statistic_of_many_shuffles_is_each_shuffle_s_own() -> None:
    # Planted: 4 conversations, 2 models, model 1 failing at level 1 alone. By hand: means
    # per level (0: 1, 1 / 1: 1, 0), overall (1, 0.5), gaps (0, 0.5 / 0, -0.5), level mean gap
    # 0.25 / -0.25, deviations -+0.25, size 2 per level: 4 x 2 x 0.0625 = 0.5. A trap: the
    # conversation coded -1 (at the overall means) is in no level. The shuffles' statistics,
    # read in one product, are each shuffle's read level by level (bit for bit where the sums
    # are exact, as here; else to the last digits, far inside the test's tolerance).
    s = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.5]])
    n = np.ones((5, 2))
    codes = np.array([0, 0, 1, 1, -1])
    masks = [(codes == level).astype(np.float64)[None] for level in range(2)]
    assert _interaction(_per_level(masks, s, n), s, n)[0][0] == pytest.approx(0.5)
    assert _interaction(_shuffled(memberships(codes[None], 2), s, n), s, n)[0][0] == pytest.approx(
        0.5
    )
    shuffled = np.random.default_rng(3).permuted(np.tile(codes, (50, 1)), axis=1)
    together, _ = _interaction(_shuffled(memberships(shuffled, 2), s, n), s, n)
    alone = [
        _interaction(_per_level([(row == v).astype(np.float64)[None] for v in (0, 1)], s, n), s, n)
        for row in shuffled
    ]
    assert together.tobytes() == np.array([found[0][0] for found in alone]).tobytes()
    assert together.max() == pytest.approx(0.5) and together.min() < 0.5
    noisy = s + np.random.default_rng(4).normal(0, 0.3, s.shape)
    together, _ = _interaction(_shuffled(memberships(shuffled, 2), noisy, n), noisy, n)
    for row, found in zip(shuffled, together, strict=True):
        by_level = [(row == v).astype(np.float64)[None] for v in (0, 1)]
        expected = _interaction(_per_level(by_level, noisy, n), noisy, n)[0][0]
        assert found == pytest.approx(expected, rel=1e-12, abs=1e-14)


def test_a_fields_shuffles_are_read_once_per_pooling_and_give_the_same_null() -> None:
    # Planted: 6 levels over 40 conversations, 300 shuffles; the cells of a summary pool them
    # alike (levels 4 and 5 too rare, left out). The memberships kept for that pooling give the
    # null statistics bit for bit as those read from the recoded shuffles afresh. A trap: a cell
    # that pools otherwise (levels 3 to 5 into "other") must not be handed the first pooling's.
    rng = np.random.default_rng(8)
    code = rng.integers(0, 6, 40)
    shuffled = rng.permuted(np.tile(code, (300, 1)), axis=1)
    levels = tuple("abcdef")
    field = Field("f", levels, code, np.arange(40), shuffled)
    s, n = rng.uniform(0, 1, (40, 3)), rng.integers(1, 4, (40, 3)).astype(np.float64)
    first, names = pooled(levels, np.array([9, 8, 7, 6, 2, 2]), 5)
    assert names == ("a", "b", "c", "d")
    kept = field.pooled_members(first, len(names))
    assert field.pooled_members(first.copy(), len(names)) is kept  # read once for that pooling
    fresh = memberships(first[shuffled], len(names))
    assert all(a.tobytes() == b.tobytes() for a, b in zip(kept, fresh, strict=True))
    null, _ = _interaction(_shuffled(kept, s, n), s, n)
    alone, _ = _interaction(_shuffled(fresh, s, n), s, n)
    assert null.tobytes() == alone.tobytes() and not np.isnan(null).any()
    other, names = pooled(levels, np.array([9, 8, 7, 4, 2, 2]), 5)
    assert names == ("a", "b", "c", "other")
    again = field.pooled_members(other, len(names))
    assert again is not kept and again[0].tobytes() != kept[0].tobytes()
    assert again[0].tobytes() == memberships(other[shuffled], len(names))[0].tobytes()
    assert not kept[0].flags.writeable  # shared between cells: never written


@pytest.mark.parametrize("scale", [1.0, 10.0, 100.0])
def test_a_shuffle_that_keeps_the_levels_counts_as_at_least_the_observed_at_any_scale(
    scale: float,
) -> None:
    # Planted: 3,000 conversations, 2 models, model 1 behind at level 1, scores up to `scale`.
    # A shuffle that leaves every conversation in its level is the observed statistic itself,
    # read by another order of adding; each must count in the p-value (p = 1). A trap: an
    # absolute tolerance held at [0, 1] and lost every such shuffle at 10 and 100.
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 2, 3_000)
    s = rng.uniform(0, scale, (3_000, 2))
    s[codes == 1, 1] *= 0.5
    n = np.ones_like(s)
    masks = [(codes == level).astype(np.float64)[None] for level in range(2)]
    observed = _interaction(_per_level(masks, s, n), s, n)[0][0]
    null, _ = _interaction(_shuffled(memberships(np.tile(codes, (200, 1)), 2), s, n), s, n)
    assert _p_value(null, float(observed)) == 1.0
    assert _p_value(null - 1e-6 * observed, float(observed)) == 1 / 201  # truly below: none
    assert observed > 0.01 * scale**2  # a real interaction, not a zero both sides meet
