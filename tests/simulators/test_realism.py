"""Realism and leaks against planted truth: scripted simulators whose answers are known, the
figures computed through the real pipeline; the AUROC against samples of known likeness."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from people import OTHER, PERSON, seekers, thumbs, writers, written
from scipy import stats
from validating import Validate

from attunebench.analysis.resampled import Resampler
from attunebench.answerform import TaskHint
from attunebench.data.validate import load_validated
from attunebench.models.base import Message
from attunebench.models.mock import MockProvider, default_answer
from attunebench.models.modelsfile import ModelEntry
from attunebench.simulators import classifier
from attunebench.simulators.authenticity import realism_auroc
from attunebench.simulators.forms import GRADE_FORM, LABEL_FORM, MESSAGE_FORM
from attunebench.simulators.realism import emotion_by_third
from attunebench.simulators.records import Continued, Written


def scripted(name: str, message: str | None = None, **answers: str) -> tuple[ModelEntry, dict]:
    """A simulator that writes `message` (None: the prompt's own system text) and answers
    each form kind in `answers` as given, every other question with its form's example."""

    def respond(messages: list[Message], hint: TaskHint | None) -> str:
        kind = hint.kind if hint is not None else ""
        if kind == MESSAGE_FORM.kind:
            return messages[0].content if message is None else message
        return answers.get(kind, default_answer(hint))

    return ModelEntry(name=name, spec=f"mock/{name}"), {name: MockProvider(name, outputs=respond)}


def sentences(phrases: tuple[str, ...], n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(phrases, size=5).tolist()) for _ in range(n)]


def test_negative_self_labels_by_third(validated: Validate, tmp_path: Path) -> None:
    data = written(tmp_path / "writers.jsonl", writers(10, seed=2))
    entry, providers = scripted("sad", "i feel fine today", **{LABEL_FORM.kind: '{"label": "Sad"}'})
    found = validated(data, entry, providers, per_conversation=20).realism.emotion_by_third
    people = [t.state.primary for c in load_validated(data) for t in c.turns if t.state]
    negative = np.mean([label in ("Sad", "Angry") for label in people])  # the last third's
    assert negative == pytest.approx(1 / 3)
    assert found.negative_simulator.value == pytest.approx(1.0)
    assert found.value == pytest.approx(1.0 - negative)
    assert found.ci_low is not None and found.ci_low > 0
    first, _, last = found.thirds
    assert first.simulator == {"Sad": 1.0}
    assert first.distance.value == pytest.approx(1.0)  # nobody was sad early on
    assert last.distance.value == pytest.approx(last.people.get("Angry", 0.0))


def test_negative_feedback_share(validated: Validate, tmp_path: Path) -> None:
    data = written(tmp_path / "thumbs.jsonl", thumbs(12, seed=6, down=0.3))
    entry, providers = scripted("grumpy", "i feel fine", **{GRADE_FORM.kind: '{"grade": 0}'})
    found = validated(data, entry, providers, per_conversation=20).realism
    share = found.negative_feedback_share
    ratings = [t.responses[0].rating for c in load_validated(data) for t in c.turns]
    down = float(np.mean([r == 0 for r in ratings]))
    assert share.people.value == pytest.approx(down)
    assert share.simulator.value == pytest.approx(1.0)
    assert share.value == pytest.approx(1.0 - down)
    assert share.by_source["thumbs"]["n"] == len(ratings)
    assert found.intensity_change.value is None and found.intensity_change.reason


def test_leaks_are_flagged_and_counted(validated: Validate, tmp_path: Path) -> None:
    data = written(tmp_path / "writers.jsonl", writers(6, seed=7))
    echo, providers = scripted("echo", None)  # writes its own instructions as the message
    echoed = validated(data, echo, providers, seeds=1).leaks
    assert echoed.messages > 0 and echoed.instructions == echoed.messages
    for text, share in ((" ".join(OTHER[:3]), 0.9), (" ".join(PERSON[:3]), 0.0)):
        entry, providers = scripted("writer", text)
        leaks = validated(data, entry, providers, seeds=1).leaks
        assert leaks.instructions == 0
        role = leaks.supporter_role / leaks.messages
        assert role >= share if share else role == 0  # the other side's words, or the person's


def test_a_message_not_written_is_an_error_beside_the_real_one(
    validated: Validate, tmp_path: Path
) -> None:
    data = written(tmp_path / "people.jsonl", [*writers(4, seed=3), *seekers(4, seed=3)])
    entry, providers = scripted("mute", "   ")
    report = validated(data, entry, providers, seeds=1)
    said = {(c.id, t.index): t.user for c in load_validated(data) for t in c.turns}
    lines = (tmp_path / "validated" / "realism.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    continued = [r for r in records if r["kind"] == "continue"]
    assert continued and all(r["error"] == "the message is empty" for r in continued)
    for record in continued:
        message = record["written"]
        assert message["real"] == said[(message["conversation_id"], message["turn_index"])]
        assert record["label"] is None and message["error"] is None  # the call came back
    sought = [r for r in records if r["kind"] == "seeker"]
    assert sought and all(r["error"] == "the message is empty" for r in sought)
    for record in sought:
        (message,) = record["messages"]  # the first message ends the conversation
        assert message["error"] == record["error"] and record["after"] is None
        assert message["real"] == said[(record["conversation_id"], message["turn_index"])]
    assert report.realism.emotion_by_third.reason == "the simulator labelled none of its messages"
    assert report.leaks.messages == 0


def _written(sim: list[str], real: list[str], per: int = 2) -> list[Written]:
    return [
        Written(
            conversation_id=f"c{i // per}",
            turn_index=i % per,
            rollout=0,
            text=text,
            real=truth,
            prompt_id="p",
        )
        for i, (text, truth) in enumerate(zip(sim, real, strict=True))
    ]


def test_the_realism_auroc_is_cross_fitted() -> None:
    n = 120
    real = sentences(PERSON, n, seed=1)
    resampler = Resampler.over([f"c{i // 2}" for i in range(n)], 500, seed=0)
    alike = realism_auroc(_written(sentences(PERSON, n, seed=2), real), resampler)
    unlike = realism_auroc(_written(sentences(OTHER, n, seed=3), real), resampler)
    assert unlike.value is not None and unlike.value > 0.95 and unlike.ci_low > 0.5
    assert alike.ci_low is not None and alike.ci_low < 0.5 < alike.ci_high
    # The trap: fitted on the very messages it scores, a classifier tells two samples of the
    # same people apart, beyond the cross-fitted interval.
    texts = sentences(PERSON, n, seed=2) + real
    labels = [1] * n + [0] * n
    scored = classifier.scores(classifier.fitted_on(texts, labels), texts)
    in_sample = stats.mannwhitneyu(scored[:n], scored[n:]).statistic / (n * n)
    assert in_sample > max(0.7, alike.ci_high)


def test_a_third_with_no_answer_has_no_distance() -> None:
    def continued(turn: int, third: int) -> Continued:
        said = Written(
            conversation_id=f"c{turn}",
            turn_index=turn,
            rollout=0,
            text="hi",
            real="hi",
            prompt_id="p",
        )
        return Continued(
            written=said,
            third=third,
            label="Sad",
            real_label="Happy",
            negative=True,
            real_negative=False,
        )

    found, _ = emotion_by_third(
        [continued(t, 0) for t in range(6)],
        Resampler.over([f"c{t}" for t in range(6)], 200, seed=0),
    )
    first, second, _ = found.thirds
    assert first.distance.value == pytest.approx(1.0)
    assert second.distance.value is None and second.distance.reason == "no item"
    assert found.value == pytest.approx(1.0)
