"""The vectorised audit statistics equal `judge.audit`'s functions, with intervals."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from attunebench.analysis.bootstrap import ClusterBootstrap
from attunebench.analysis.frame import Frame
from attunebench.analysis.judges import audit_counts, judge_agreement, statistics
from attunebench.analysis.loading import Runs
from attunebench.analysis.provenance import Roster
from attunebench.judge import audit
from attunebench.records import ItemRecord

REFERENCE = {
    "accuracy": audit.judge_accuracy,
    "agreement": audit.verdict_agreement,
    "kappa": audit.judge_kappa,
    "flip_rate": audit.flip_rate,
    "longer_win_share": audit.longer_win_share,
    "participant_longer_share": audit.participant_longer_share,
    "length_balanced_agreement": audit.length_balanced_agreement,
    "length_matched_agreement": audit.length_matched_agreement,
}

def shared(frame: Frame, resamples: int, seed: int = 0) -> ClusterBootstrap:
    """Conversation resamples for a frame."""
    rng = np.random.default_rng(seed)
    return ClusterBootstrap.create(np.arange(len(frame.conversations)), resamples, rng)



def pair(i: int, ab: str | None, ba: str | None, chosen: str | None, lengths: tuple[int, int],
         status: str = "ok") -> ItemRecord:  # fmt: skip
    picks = {o: p for o, p in (("ab", ab), ("ba", ba)) if p is not None}
    score = None if status == "failed" else float(status == "ok" and ab == ba == (chosen or "tie"))
    return ItemRecord(
        task="judge_audit", model="proxy/j", conversation_id=f"c{i % 4}", turn_index=i,
        item_id=f"x{i}~y{i}", status=status,  # type: ignore[arg-type]
        prediction=picks or None, score=score,
        gold={"chosen": chosen, "tie": chosen is None},
        meta={"first": f"x{i}", "second": f"y{i}", "len_a": lengths[0], "len_b": lengths[1]},
    )  # fmt: skip


def mixed_records() -> list[ItemRecord]:
    rng = np.random.default_rng(0)
    out = []
    for i in range(60):
        first, second = f"x{i}", f"y{i}"
        options = [first, second, "tie"]
        chosen = [first, second, None][int(rng.integers(3))]
        ab, ba = (options[int(rng.integers(3))] for _ in range(2))
        lengths = (int(rng.integers(10, 40)), int(rng.integers(10, 40)))
        status = "ok"
        if i % 9 == 0:
            ba, status = None, "invalid"  # one order unparsed: the other still counts
        if i % 13 == 0:
            ab = ba = None
            status = "failed"
        out.append(pair(i, ab, ba, chosen, lengths, status))
    return out


def test_every_statistic_equals_the_audit_function() -> None:
    records = mixed_records()
    sums = np.sum([audit_counts(r) for r in records], axis=0)
    values = statistics(sums)
    for name, function in REFERENCE.items():
        expected = function(records)
        assert expected is not None, name
        assert values[name] == pytest.approx(expected), name


def test_undefined_statistics_are_null_with_a_reason() -> None:
    # every pair has equal lengths and the participant always picked the first reply
    records = [pair(i, f"x{i}", f"x{i}", f"x{i}", (20, 20)) for i in range(8)]
    frame = Frame.from_records(records)
    boot = shared(frame, 100, 0)
    (agreement,) = judge_agreement(frame, boot, Roster({}))
    assert agreement.accuracy.value == 1.0
    assert agreement.longer_win_share.value is None and agreement.longer_win_share.reason
    assert agreement.kappa.value is None  # one label only: p_e = 1
    assert audit.judge_kappa(records) is None


def test_the_judge_is_labelled_and_its_accuracy_has_an_interval(load: Callable[..., Runs]) -> None:
    runs = load({"m/a": {"emotion": 0.5}}, conversations=40, judge_accuracy=0.8)
    frame = Frame.from_records(runs.records)
    boot = shared(frame, 500, 0)
    (agreement,) = judge_agreement(frame, boot, Roster({}))
    assert agreement.judge_kind == "proxy"
    accuracy = agreement.accuracy
    assert accuracy.ci_low is not None and accuracy.ci_high is not None and accuracy.value
    assert accuracy.ci_low < accuracy.value < accuracy.ci_high
    audited = [r for r in runs.records if r.task == "judge_audit"]
    assert accuracy.value == pytest.approx(audit.judge_accuracy(audited))
