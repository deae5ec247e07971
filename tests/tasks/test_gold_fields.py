"""A task's `gold_fields` are checked against the fields the data format labels (whose
provenance a source declares) when its class is defined: a field the format has no such label
for would leave the report calling the gold undeclared and the simulators dropping the task,
without a word."""

from __future__ import annotations

from typing import Any

import pytest

from attunebench.data.schema import LABELLED_FIELDS
from attunebench.frozen import Frozen
from attunebench.tasks import Gold, Task, load_tasks


def declare(*fields: str) -> type[Task[Any, Any]]:
    """A task class declaring these gold fields (abstract: only its definition is checked)."""

    class Declared(Task[Gold, Frozen]):
        name = "declared"
        gold_fields = fields

    return Declared


def test_a_field_the_format_cannot_label_is_refused_in_one_line() -> None:
    with pytest.raises(TypeError) as refused:
        declare("state", "state.valence")
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("declare.<locals>.Declared.gold_fields names 'state.valence',")
    assert "'state'," not in message  # the field it can label is not blamed
    assert all(field in message for field in LABELLED_FIELDS)  # says what it could be


def test_fields_the_format_labels_pass() -> None:
    assert declare(*LABELLED_FIELDS).gold_fields == LABELLED_FIELDS
    assert declare().gold_fields == ()


def test_every_registered_task_declares_fields_the_format_labels() -> None:
    for name in load_tasks():
        fields = load_tasks().get(name)().gold_fields
        assert set(fields) <= set(LABELLED_FIELDS), name


def test_a_grouped_scoring_refuses_a_gold_that_does_not_say_what_its_prompt_shows() -> None:
    # Planted: the behavior task's grouping on a gold without `shown`. The references would
    # read it only when the analysis runs; the class statement refuses it in one line.
    from attunebench.tasks.behavior import BehaviorGold, BehaviorScoring

    with pytest.raises(TypeError) as refused:

        class Unshown(Task[Gold, Frozen], scoring=BehaviorScoring):
            name = "unshown"

    message = str(refused.value)
    assert "\n" not in message and "Unshown" in message and "shown()" in message

    class Shown(Task[BehaviorGold, Frozen], scoring=BehaviorScoring):  # the trap: a gold with one
        name = "shown"

    assert Shown._scoring_part is BehaviorScoring
