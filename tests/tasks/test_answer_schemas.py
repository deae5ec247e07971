"""Each answer form's JSON schema (`AnswerForm.schema`), which a constrained server decodes to:
it accepts every answer the form's own writers (`example`, `random`, `from_gold`) produce for
the hints the real engine sends, on data carrying every task's gold, and it rejects what the
parser would reject: a label outside the taxonomy, a number outside its scale, a field that
is not the form's."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from attunebench.answerform import FORMS, AnswerForm, TaskHint, in_scale, is_strict, obj
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.engine import RunConfig, run
from attunebench.models.modelsfile import ModelEntry
from attunebench.tasks import load_tasks
from testkit.conversations import as_bot_chat, with_feedback

STAND_INS = ("mock/default", "baseline/random", "sim/oracle")
WRITERS = ("example", "random", "from_gold")
LABELS = ("sadness", "joy", "fear")


def entries(*specs: str) -> tuple[ModelEntry, ...]:
    return tuple(ModelEntry(name=spec, spec=spec) for spec in specs)


def valid(answer: Any, schema: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(answer)


@dataclass
class Checked:
    """The (kind, writer) pairs checked, the answers refused, and the kinds answered in JSON."""

    seen: Counter[tuple[str, str]] = field(default_factory=Counter)
    refused: list[tuple[str, str, str]] = field(default_factory=list)
    json_kinds: set[str] = field(default_factory=set)


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[Checked]:
    """Every form's writers, wrapped: each answer written is checked against the schema of
    the hint it answers."""
    load_tasks()
    checks = Checked()

    def wrap(form: AnswerForm, writer: str) -> Callable[..., str]:
        original = getattr(form, writer)

        def written(hint: TaskHint, *args: Any) -> str:
            answer: str = original(hint, *args)
            if answer.startswith("{"):
                checks.json_kinds.add(form.kind)
            schema = form.schema(hint)
            if schema is not None:
                checks.seen[form.kind, writer] += 1
                if not valid(json.loads(answer), schema):
                    checks.refused.append((form.kind, writer, answer))
            return answer

        return written

    for kind in FORMS:
        form = FORMS.get(kind)
        for writer in WRITERS:
            monkeypatch.setattr(form, writer, wrap(form, writer))
    yield checks


async def test_schemas_accept_every_answer_the_forms_write(
    checked: Checked, tmp_path: Path
) -> None:
    sample = read_conversations(sample_path())
    data = tmp_path / "gold.jsonl"
    write_conversations(data, [*sample[:6], with_feedback(sample[0]), as_bot_chat(sample[1])])
    common = {"data": data, "cache_path": None, "progress": False, "check_servers": False}
    subjects = RunConfig(
        out=tmp_path / "subjects",
        models=entries(*STAND_INS),
        judges=entries("mock/default"),
        **common,  # type: ignore[arg-type]
    )
    judged = [t for t in load_tasks().names() if load_tasks().get(t)().evaluates == "judges"]
    judges = RunConfig(
        out=tmp_path / "judges",
        models=(),
        judges=entries(*STAND_INS),
        tasks=tuple(judged),
        **common,  # type: ignore[arg-type]
    )
    for config in (subjects, judges):
        assert (await run(config)).complete
    assert not checked.refused, checked.refused[:3]
    # Every form that answers in JSON has a schema, and each of its writers was checked.
    assert {kind for kind, _ in checked.seen} == checked.json_kinds
    # `random` of every form but the rubric's (no stand-in scores at random: checked below),
    # `from_gold` of every form that has a gold answer.
    for kind in checked.json_kinds:
        form = FORMS.get(kind)
        writers = {"example"} | ({"from_gold"} if form.gold_answers else set())
        writers |= {"random"} if kind != "judge_rubric" else set()
        missing = [w for w in writers if not checked.seen[kind, w]]
        assert not missing, (kind, missing)


def emotion_schema() -> dict[str, Any]:
    schema = FORMS.get("emotion").schema(TaskHint("emotion", labels=LABELS))
    assert schema is not None
    return schema


def test_an_emotion_outside_the_taxonomy_is_refused() -> None:
    schema = emotion_schema()
    assert valid({"primary": "joy", "emotions": ["joy", "fear"], "intensity": 4}, schema)
    # The trap: a real emotion word, but not one of this taxonomy's labels.
    assert not valid({"primary": "anger", "emotions": ["anger"]}, schema)
    assert not valid({"primary": "joy", "emotions": ["joy", "anger"]}, schema)
    assert not valid({"primary": "joy", "emotions": ["joy"], "intensity": 6}, schema)
    assert not valid({"primary": "joy", "emotions": ["joy"], "mood": "ok"}, schema)
    assert not valid({"emotions": ["joy"]}, schema)  # no primary


def test_numbers_outside_their_scale_are_refused() -> None:
    rating = FORMS.get("rating").schema(TaskHint("rating", labels=("0", "1")))
    assert rating is not None
    assert valid({"rating": 1}, rating) and valid({"rating": 0.5}, rating)
    assert not valid({"rating": 5}, rating) and not valid({"rating": "1"}, rating)
    hint = TaskHint("outcome", labels=("empathy",), reference={"empathy": "1:5"})
    outcome = FORMS.get("outcome").schema(hint)
    assert outcome is not None
    assert valid({"empathy": 3}, outcome) and valid({"empathy": None}, outcome)
    assert not valid({"empathy": 7}, outcome) and not valid({}, outcome)
    verdict = FORMS.get("judge_rubric").schema(TaskHint("judge_rubric"))
    assert verdict is not None
    assert valid({"score": 7, "reason": "kind"}, verdict)
    assert not valid({"score": 11, "reason": "kind"}, verdict)
    assert not valid({"score": 7.5, "reason": "kind"}, verdict)  # whole points only
    rng = np.random.default_rng(0)
    scores = [
        json.loads(FORMS.get("judge_rubric").random(TaskHint("judge_rubric"), rng))
        for _ in range(50)
    ]
    assert all(valid(score, verdict) for score in scores)


def test_plain_text_has_no_schema() -> None:
    assert FORMS.get("response").schema(TaskHint("response", text="hi")) is None
    # A hint with no labels gives a label form nothing to choose from: no schema, not enum [].
    assert FORMS.get("emotion").schema(TaskHint("emotion")) is None
    assert FORMS.get("rating").schema(TaskHint("rating")) is None  # no scale to hold it to


def test_strict_only_where_every_field_is_required() -> None:
    assert is_strict(obj({"rating": in_scale(1, 5)}))
    assert not is_strict(obj({"rating": in_scale(1, 5)}, optional=("rating",)))
    assert not is_strict({"type": "object", "properties": {}, "required": []})  # extras allowed
    assert not is_strict(emotion_schema())  # its numbers are optional
    preference = FORMS.get("preference").schema(TaskHint("preference"))
    assert preference is not None and is_strict(preference)
