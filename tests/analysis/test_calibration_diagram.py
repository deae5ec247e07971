"""The reliability diagram of each model's choice answers, read from the calibration metrics'
reading of the same answers where the scores were computed first (as the summary does), is the
diagram read from the answers themselves; a planted overconfident model is found out in it."""

from __future__ import annotations

import numpy as np
import pytest

from attunebench.analysis.bootstrap import ClusterBootstrap
from attunebench.analysis.breakdowns.diagnostics import calibration
from attunebench.analysis.cells import build_cell
from attunebench.analysis.frame import Frame
from attunebench.analysis.scores import metric_scores
from attunebench.records import Distribution, ItemRecord
from planted import synthetic
from planted.synthetic import Plan


def choice_records() -> list[ItemRecord]:
    """Emotion answers with label probabilities: m/a states 0.95 for its label, m/b states
    0.6; some answers (a generated one, say) hold no probabilities."""
    plan = Plan({"m/a": {"emotion": 0.7}, "m/b": {"emotion": 0.6}}, 30)
    out = []
    for n, record in enumerate(synthetic.runs(plan).records):
        prediction = record.prediction or {}
        if record.task != "emotion" or not prediction.get("primary") or n % 7 == 0:
            out.append(record)
            continue
        stated = 0.95 if record.model == "m/a" else 0.6
        named = str(prediction["primary"])
        other = "calm" if named != "calm" else "joy"
        probabilities = {named: stated, other: round(1.0 - stated, 2)}
        update = {
            "prediction": {**prediction, "label_probabilities": probabilities},
            "distributions": {"label": Distribution(probabilities=probabilities)},
        }
        out.append(record.model_copy(update=update))
    return out


def test_the_diagram_from_the_metrics_reading_is_the_answers_own() -> None:
    frame = Frame.from_records(choice_records())
    variant = frame.task_variants("emotion")[0]
    fresh = build_cell(frame, "emotion", variant, all_items=False)
    read_first = build_cell(frame, "emotion", variant, all_items=False)
    bootstrap = ClusterBootstrap.create(
        np.arange(len(frame.conversations)), 50, np.random.default_rng(0)
    )
    metric_scores(frame, bootstrap, read_first)
    assert read_first.readings and not fresh.readings
    own, shared = calibration(frame, fresh), calibration(frame, read_first)
    assert own == shared and len(own) == 2
    # planted: m/a states 0.95 for every label it names, right about 70% of the time
    curve = next(c for c in own if c.model == "m/a")
    assert len(curve.bins) == 1 and curve.bins[0].confidence == pytest.approx(0.95)
    assert 0.5 < curve.bins[0].accuracy < 0.85
