"""Twins that are twins for the baselines (`tasks.helpers.twins`): `baseline/random` answers an item
and its person-hidden twin alike (its person gap is exactly 0), and a fitted baseline asked a twin
learns from the train items' twins, never from items it was shown the person's words in."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from attunebench.answerform import TaskHint
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.person import PLACEHOLDER
from attunebench.data.sample import sample_path
from attunebench.engine.training import teach
from attunebench.models.base import GenerateParams, ProviderError
from attunebench.models.baselines import KnnBaseline, RandomBaseline, RandomOptions, base
from attunebench.models.baselines.knn import KnnOptions
from attunebench.tasks import load_tasks
from attunebench.tasks.helpers.twins import PERSON_HIDDEN, PersonOption, person_twins

sys.path.insert(0, str(Path(__file__).parent))
from knn_harness import HashEncoder

PARAMS = GenerateParams()
TASKS = ("emotion", "behavior", "preference", "rating", "outcome", "response")


def twin_hints(task: str, person: PersonOption = "both") -> list[TaskHint]:
    """Every query's hint for the sample's items and their twins, addressed as the engine
    addresses them, shown item first."""
    made = load_tasks().get(task)()
    found = []
    for item in person_twins(made.items(read_conversations(sample_path())), person):
        for query in made.queries(item, "generate"):
            assert query.hint is not None
            found.append(dataclasses.replace(query.hint, item_key=f"{item.key}|{query.key}"))
    return found


def test_the_twin_mark_is_the_tasks_own() -> None:
    assert base.PERSON_HIDDEN == PERSON_HIDDEN  # a provider may not import it from the tasks
    key = "emotion|c|0|turn|blind+person-hidden|answer"
    assert base.shown_key(key) == "emotion|c|0|turn|blind|answer"
    assert base.shown_key("emotion|c|0|turn|person-hidden|answer") == "emotion|c|0|turn||answer"
    assert base.shown_key("emotion|c|0|turn|blind|answer") == "emotion|c|0|turn|blind|answer"


@pytest.mark.parametrize("task", TASKS)
async def test_random_answers_an_item_and_its_twin_alike(task: str) -> None:
    random = RandomBaseline("baseline/random", RandomOptions(seed=3))
    shown: dict[str, str] = {}
    hidden: dict[str, str] = {}
    for hint in twin_hints(task):
        answer = (await random.generate([], PARAMS, hint)).text
        (hidden if base.person_hidden(hint) else shown)[base.shown_key(hint.item_key)] = answer
    assert shown and shown == hidden  # the known answer: every twin as its item
    # the trap: not one answer for all (it still draws per item), nor twins alike only
    # because their hints are (the twin's prompt reads the placeholder)
    assert len(set(shown.values())) > 1 or task == "response"
    if task != "response":  # a reply's hint carries the history, where the person hides
        return
    assert any(PLACEHOLDER in str(h.history) for h in twin_hints(task, "hidden"))


def _knn(train: Path, person: PersonOption) -> KnnBaseline:
    provider = KnnBaseline("baseline/knn", KnnOptions(train=train, k=1), encoder=HashEncoder())
    made = [load_tasks().get("emotion")()]
    teach([provider], made, frozenset(), Path("evaluated-elsewhere.jsonl"), person)
    return provider


async def test_a_fitted_baseline_asked_a_twin_learns_from_the_train_items_twins(
    tmp_path: Path,
) -> None:
    conversations = read_conversations(sample_path())
    write_conversations(tmp_path / "train.jsonl", conversations[:6])
    evaluated = [c.model_copy(update={"id": f"asked-{c.id}"}) for c in conversations[6:]]
    knn = _knn(tmp_path / "train.jsonl", "both")
    examples = knn.examples["emotion"]
    made = load_tasks().get("emotion")()
    asked = []
    for item in person_twins(made.items(evaluated), "both"):
        for query in made.queries(item, "generate"):
            assert query.hint is not None
            asked.append(dataclasses.replace(query.hint, item_key=f"{item.key}|{query.key}"))
    twins = [h for h in asked if base.person_hidden(h)]
    assert twins and len(twins) * 2 == len(asked)
    for hint in asked:  # each learns from its own kind: twins from twins, items from items
        hidden = base.person_hidden(hint)
        chosen = knn.alike(hint)
        assert chosen and all(base.person_hidden(examples[i].hint) == hidden for i in chosen)
    # the known answer: a twin reads only the placeholder, as the train items' twins do, so
    # every twin asking one question gets one answer (the ties go to the first example)
    answers: dict[Any, set[str]] = {}
    for hint in twins:
        assert hint.form is not None
        answer = (await knn.generate([], PARAMS, hint)).text
        answers.setdefault(hint.form.question(hint), set()).add(answer)
        assert answer == knn.written(hint, knn.alike(hint)[:1], [1.0])
    assert all(len(found) == 1 for found in answers.values())
    # the trap: taught the shown items only, a fitted baseline refuses a twin rather than
    # answering it from items it read the person's words in
    shown_only = _knn(tmp_path / "train.jsonl", "shown")
    assert not any(base.person_hidden(e.hint) for e in shown_only.examples["emotion"])
    with pytest.raises(ProviderError, match="with the person hidden"):
        await shown_only.generate([], PARAMS, twins[0])
