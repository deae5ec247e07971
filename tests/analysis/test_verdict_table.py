"""The verdict table reads the pairwise verdicts of judged answers and the judge audit's picks:
a record whose verdicts are all ratings (most judged records) gives no row, and the records
passed over are exactly those."""

from __future__ import annotations

import numpy as np

from attunebench.analysis.frame import Frame
from attunebench.analysis.judges.audit import audits_judges
from attunebench.analysis.judges.verdict_table import (
    FIRST,
    JUDGED,
    SECOND,
    _audit_rows,
    _judged_rows,
    table_of,
    verdict_table,
)
from attunebench.records import ItemRecord
from planted import synthetic
from planted.synthetic import Plan


def mixed_records() -> list[ItemRecord]:
    """Every third judged record's verdicts made pairwise, one of them with its order lost."""
    plan = Plan({"m/a": {"response": 0.6}, "m/b": {"response": 0.4}}, 12, judge_accuracy=0.7)
    records = list(synthetic.runs(plan).records)
    judged = [i for i, r in enumerate(records) if r.verdicts and r.status != "failed"]
    for n, i in enumerate(judged[::3]):
        verdicts = [v.model_copy(update={"mode": "pairwise"}) for v in records[i].verdicts]
        if n == 0:
            verdicts[0] = verdicts[0].model_copy(update={"order": None})
        records[i] = records[i].model_copy(update={"verdicts": tuple(verdicts)})
    return records


def test_rows_are_the_pairwise_verdicts_of_a_walk_of_every_record() -> None:
    records = mixed_records()
    frame = Frame.from_records(records)
    found = verdict_table(frame, audits_judges)
    rows: list[tuple[object, ...]] = []
    conversations: list[int] = []
    for i, record in enumerate(records):
        if record.status == "failed":
            continue
        walked = _audit_rows(record) if audits_judges(record.task) else _judged_rows(record)
        rows += walked
        conversations += [int(frame.conversation[i])] * len(walked)
    expected = table_of(rows, conversations, ("response",))
    for name in ("judge", "unit", "order", "pick", "truth", "conversation", "lengths"):
        assert np.array_equal(getattr(found, name), getattr(expected, name)), name
    assert found.task == expected.task and found.authors == expected.authors
    assert found.judged_tasks == ("response",)
    # planted: 4 verdicts per pairwise record but the one whose order was lost; each pick is
    # the side the judge's letter names in its order
    pairwise = [r for r in records if any(v.mode == "pairwise" for v in r.verdicts)]
    judged = found.task.count(JUDGED)
    assert judged == 4 * len(pairwise) - 1
    assert set(found.pick[np.array(found.task) == JUDGED].tolist()) <= {FIRST, SECOND}


def test_no_pairwise_verdict_gives_no_judged_row() -> None:
    records = [
        r.model_copy(
            update={"verdicts": tuple(v.model_copy(update={"mode": "proxy"}) for v in r.verdicts)}
        )
        for r in mixed_records()
    ]
    found = verdict_table(Frame.from_records(records), audits_judges)
    assert JUDGED not in found.task and found.judged_tasks == ()
    assert len(found.task) > 0  # the audit's rows are still read
