"""The verdict table walks the judged answers only where some verdict is pairwise: the rows are
those of the pairwise verdicts, whether or not other modes are present."""

from __future__ import annotations

from attunebench.analysis.frame import Frame
from attunebench.analysis.judges.verdict_table import JUDGED, any_pairwise, verdict_table
from attunebench.records import ItemRecord
from planted import synthetic
from planted.synthetic import Plan


def judged_records() -> tuple[ItemRecord, ...]:
    plan = Plan({"m/a": {"response": 0.6}, "m/b": {"response": 0.4}}, 6, judge_accuracy=0.7)
    return synthetic.runs(plan).records


def test_pairwise_verdicts_give_judged_rows_and_other_modes_none() -> None:
    records = judged_records()
    assert not any_pairwise(Frame.from_records(records))  # the proxy judge's verdicts
    assert JUDGED not in verdict_table(Frame.from_records(records), lambda _: False).task
    first = next(r for r in records if r.verdicts)
    pairwise = first.verdicts[0].model_copy(update={"mode": "pairwise", "judge": "m/judge"})
    changed = first.model_copy(update={"verdicts": (*first.verdicts, pairwise)})
    frame = Frame.from_records([changed, *(r for r in records if r is not first)])
    assert any_pairwise(frame)
    table = verdict_table(frame, lambda _: False)
    assert table.task == (JUDGED,) and table.judges == ("m/judge",)
    assert table.judged_tasks == ("response",)
