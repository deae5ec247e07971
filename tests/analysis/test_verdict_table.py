"""The verdict table's judged answers are the records with a pairwise verdict in a stated order;
a record whose judges scored its reply alone (rubric, proxy) gives no row."""

from __future__ import annotations

from attunebench.analysis.frame import Frame
from attunebench.analysis.judges.verdict_table import JUDGED, pairwise, verdict_table
from attunebench.records import ItemRecord
from planted import synthetic
from planted.synthetic import Plan


def judged_records() -> tuple[ItemRecord, ...]:
    plan = Plan({"m/a": {"response": 0.6}, "m/b": {"response": 0.4}}, 6, judge_accuracy=0.7)
    return synthetic.runs(plan).records


def test_pairwise_verdicts_give_judged_rows_and_other_modes_none() -> None:
    records = judged_records()
    assert not pairwise(records).any()  # the proxy judge's verdicts
    assert JUDGED not in verdict_table(Frame.from_records(records), lambda _: False).task
    first = next(r for r in records if r.verdicts)
    verdict = first.verdicts[0].model_copy(update={"mode": "pairwise", "judge": "m/judge"})
    changed = first.model_copy(update={"verdicts": (*first.verdicts, verdict)})
    unordered = verdict.model_copy(update={"order": None})
    other = next(r for r in records if r.verdicts and r is not first)
    loose = other.model_copy(update={"verdicts": (*other.verdicts, unordered)})
    rest = [r for r in records if r is not first and r is not other]
    assert pairwise([changed, loose, *rest]).tolist() == [True] + [False] * (len(rest) + 1)
    frame = Frame.from_records([changed, loose, *rest])
    table = verdict_table(frame, lambda _: False)
    assert table.task == (JUDGED,) and table.judges == ("m/judge",)
    assert table.judged_tasks == ("response",)
