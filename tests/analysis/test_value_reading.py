"""The tasks' value readers that read each distinct answer once give, on a planted run, exactly
what reading every record on its own gives; and an answer is its prediction and its status."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from attunebench.analysis.cells import task_object, typed_views
from attunebench.tasks import emotion, preference
from attunebench.tasks.helpers import metrics
from planted import synthetic
from planted.synthetic import Plan

TASKS = ("emotion", "preference")


def planted_views() -> dict[str, list[Any]]:
    """Each task's views of every record of a planted run, failed ones included, as an
    analysis makes them (each distinct prediction one object)."""
    accuracy = {f"m/{m}": {task: 0.4 + 0.2 * m for task in TASKS} for m in range(3)}
    plan = Plan(accuracy, conversations=12, invalid_rate=0.1, failed_rate=0.1)
    frame = synthetic.runs(plan).frame
    out = {}
    for task in TASKS:
        declaration = task_object(task)
        assert declaration is not None
        out[task] = list(typed_views(declaration, frame, frame.cell(task, "blind")).values())
    return out


def test_an_answer_is_read_once_and_each_view_gets_its_own_answers_value() -> None:
    calls: list[Any] = []

    def of(view: Any) -> tuple[str, str]:
        calls.append(view)
        return view.prediction.label, view.status

    said, other = SimpleNamespace(label="a"), SimpleNamespace(label="a")  # equal, not one
    views = [
        SimpleNamespace(prediction=p, status=s)
        for p, s in [(said, "ok"), (said, "ok"), (other, "ok"), (said, "invalid"), (said, "ok")]
    ]
    one_by_one = list(map(of, views))
    calls.clear()
    assert metrics.per_answer(of, views) == one_by_one
    # (said, ok), (other, ok), (said, invalid): the same prediction under another status is
    # another answer, and an equal prediction that is another object is read on its own
    assert len(calls) == 3


def test_answer_read_metrics_equal_reading_each_record_on_a_planted_run() -> None:
    views = planted_views()["preference"]
    assert len(views) > 100 and {v.status for v in views} == {"ok", "invalid", "failed"}
    by_name = {m.name: m for m in preference.PreferenceScoring.metrics}
    expected: dict[str, Any] = {
        "flip_rate": metrics.column(list(map(preference.flip, views))),
        "first_shown_probability": metrics.column(
            list(map(preference.first_shown_probability, views))
        ),
    }
    for name, values in expected.items():
        np.testing.assert_array_equal(by_name[name].values(views), values)
    rows = [preference.first_shown_pick(v) for v in views]
    found, owners = by_name["first_shown_share"].values(views)
    np.testing.assert_array_equal(found[:, 0], [x for row in rows for x in row])
    np.testing.assert_array_equal(owners, [i for i, row in enumerate(rows) for _ in row])


def number_rows_one_by_one(views: list[Any]) -> np.ndarray:
    """What `emotion._number_rows` reads, a record at a time."""
    out = []
    for view in views:
        guess = view.prediction if view.parsed else None
        row: list[float] = []
        for name, key in emotion.ASKED.items():
            given = None if guess is None else getattr(guess, name)
            truth = getattr(view.gold, name)
            asked = view.record.scores.get(key) is not None
            answered = float(given is not None) if asked else np.nan
            row += [np.nan if given is None else given, np.nan if truth is None else truth]
            row.append(answered)
        out.append(row)
    return np.array(out, dtype=np.float64)


def test_emotion_number_rows_equal_reading_each_record_on_a_planted_run() -> None:
    views = planted_views()["emotion"]
    found = emotion._number_rows(views)
    # planted: numbers asked and answered, asked and not answered (invalid), not asked
    assert (found[:, 2] == 1).any() and (found[:, 2] == 0).any()
    np.testing.assert_array_equal(found, number_rows_one_by_one(views))
