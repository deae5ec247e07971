"""Person-hidden twins (`run --person`): the same items, gold and replies, with the person's own
words hidden from the prompts only; a run that resumes, shards, merges and caches them apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import person as data_person
from attunebench.data.jsonl import read_conversations
from attunebench.data.person import PLACEHOLDER
from attunebench.data.schema import Conversation
from attunebench.engine import read_records, read_run_info
from attunebench.engine.scheduler import plan_units
from attunebench.prompts import defang
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Item, Task, takes_option
from attunebench.tasks.helpers import twins
from attunebench.tasks.helpers.prompting import quoted_start
from attunebench.tasks.helpers.twins import hidden_variant, is_person_hidden, person_twins

SAMPLE = Path(__file__).parents[2] / "src" / "attunebench" / "data" / "sample" / "sample.jsonl"
runner = CliRunner()


def attunebench(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def model_tasks(context: str = "both") -> list[Task[Any, Any]]:
    """Every registered task that evaluates models, made in both context modes where it has them."""
    registry = load_tasks()
    made = []
    for name in registry.names():
        factory = registry.get(name)
        task = factory(context=context) if takes_option(factory, "context") else factory()
        if task.evaluates == "models":
            made.append(task)
    return made


def person_words(conversation: Conversation) -> list[str]:
    """What the person wrote, as prompts show it (whole, or a self-report's quoted start),
    longest first (so a message is replaced before a part of it)."""
    said = [turn.user for turn in conversation.turns]
    said += [defang(quoted_start(turn.user)) for turn in conversation.turns]
    said += [conversation.context.situation] if conversation.context.situation else []
    return sorted(set(said), key=len, reverse=True)


def hidden_by_hand(text: str, conversation: Conversation) -> str:
    for words in person_words(conversation):
        text = text.replace(words, PLACEHOLDER)
    return text


@pytest.mark.parametrize("task", model_tasks(), ids=lambda task: task.name)
def test_a_twin_is_its_item_with_only_the_persons_words_hidden(task: Task[Any, Any]) -> None:
    conversations = read_conversations(SAMPLE)
    items = list(task.items(conversations))
    found = list(person_twins(items, "both"))
    assert found[0::2] == items  # each shown item, then its twin
    for item, twin in zip(items, found[1::2], strict=True):
        assert (twin.conversation.id, twin.turn_index, twin.item_id) == (
            item.conversation.id,
            item.turn_index,
            item.item_id,
        )
        assert twin.gold == item.gold and twin.variant == hidden_variant(item.variant)
        assert twin.context == item.context and is_person_hidden(twin.variant)
        assert twin.as_happened().conversation == item.conversation
        for mode in task.answer_modes:
            for shown, asked in zip(
                task.queries(item, mode), task.queries(twin, mode), strict=True
            ):
                # The prompt is the shown one with the person's words replaced, nothing else:
                # the replies, the options and the instructions stay.
                expected = [hidden_by_hand(m.content, item.conversation) for m in shown.messages]
                assert [m.content for m in asked.messages] == expected
                assert not any(
                    words in m.content
                    for m in asked.messages
                    for words in person_words(item.conversation)
                )
                if shown.hint is not None and asked.hint is not None:
                    conversation = item.conversation
                    assert asked.hint.candidates == shown.hint.candidates
                    assert asked.hint.labels == shown.hint.labels
                    assert asked.hint.text == hidden_by_hand(shown.hint.text, conversation)
                    assert asked.hint.history == tuple(
                        (role, hidden_by_hand(text, conversation))
                        for role, text in shown.hint.history
                    )


def test_hidden_asks_only_the_twins_and_a_conversation_is_hidden_once() -> None:
    conversations = read_conversations(SAMPLE)[:2]
    items = list(load_tasks().get("emotion")(context="both").items(conversations))
    found = list(person_twins(items, "hidden"))
    assert [twin.variant for twin in found] == [hidden_variant(i.variant) for i in items]
    by_conversation = {id(twin.conversation) for twin in found}
    assert len(by_conversation) == 2
    assert list(person_twins(items, "shown")) == items


def test_a_units_twins_come_after_its_shown_items() -> None:
    conversations = read_conversations(SAMPLE)[:1]
    task = load_tasks().get("emotion")(context="both")
    work = [(task, item, ["m"]) for item in person_twins(task.items(conversations), "both")]
    (unit,) = plan_units(work, set())
    hidden = [is_person_hidden(item.variant) for _, item in unit.work]
    assert hidden == sorted(hidden) and any(hidden) and not all(hidden)
    turns = [item.turn_index for _, item in unit.work if not is_person_hidden(item.variant)]
    assert turns == sorted(turns)


@pytest.fixture
def base(tmp_path: Path) -> list[str]:
    return [
        "run",
        "--data",
        str(SAMPLE),
        "--task",
        "emotion",
        "--task",
        "preference",
        "--limit",
        "4",
        "--no-progress",
        "--model",
        "mock/default",
        "--cache",
        str(tmp_path / "cache.sqlite"),
    ]


def record_keys(out: Path) -> dict[tuple[str, str, str, int, str, str], Any]:
    return {r.key: r for r in read_records(out / "records.jsonl")}


def test_both_records_each_item_and_its_twin_with_the_same_gold(
    base: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "both"
    code, output = attunebench(*base, "--out", str(out), "--person", "both", "--context", "both")
    assert code == 0, output
    info = read_run_info(out)
    assert info is not None and info.person == "both" and info.complete
    records = record_keys(out)
    variants = {key[-1] for key in records}
    assert variants == {"blind", "informed", "blind+person-hidden", "informed+person-hidden"}
    for key, record in records.items():
        if is_person_hidden(record.variant):
            shown = records[(*key[:-1], twins.shown_variant(record.variant))]
            assert record.gold == shown.gold
    code, output = attunebench(*base, "--out", str(out), "--person", "both", "--context", "both")
    assert code == 0 and " 0 calls, 0 cache hits" in output  # resumed: nothing left
    code, output = attunebench(*base, "--out", str(out), "--person", "shown", "--context", "both")
    assert code == 2 and "differs in person" in output.replace("\n", " ")


def test_twins_are_cached_apart_from_the_shown_items(base: list[str], tmp_path: Path) -> None:
    code, output = attunebench(*base, "--out", str(tmp_path / "shown"))
    assert code == 0, output
    shown = len(read_records(tmp_path / "shown" / "records.jsonl"))
    code, output = attunebench(*base, "--out", str(tmp_path / "both"), "--person", "both")
    assert code == 0, output
    calls = json.loads((tmp_path / "both" / "ledger.json").read_text())["entries"]
    # The shown items' answers come from the cache; each twin is a call of its own.
    assert sum(e["cache_hits"] for e in calls) == sum(e["calls"] for e in calls) > 0
    assert len(read_records(tmp_path / "both" / "records.jsonl")) == 2 * shown


def test_shards_of_a_twinned_run_merge_into_the_single_run(base: list[str], tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    assert attunebench(*base, "--out", str(whole), "--person", "both", "--no-cache")[0] == 0
    shards = [tmp_path / f"shard{i}" for i in (1, 2)]
    for i, shard in enumerate(shards, 1):
        code, output = attunebench(
            *base, "--out", str(shard), "--person", "both", "--shard", f"{i}/2", "--no-cache"
        )
        assert code == 0, output
    code, output = attunebench("merge", *map(str, shards), "--out", str(tmp_path / "merged"))
    assert code == 0, output
    merged, single = record_keys(tmp_path / "merged"), record_keys(whole)
    assert merged.keys() == single.keys()
    assert all(merged[k].prediction == single[k].prediction for k in single)
    other = tmp_path / "other"
    assert attunebench(*base, "--out", str(other), "--shard", "2/2", "--no-cache")[0] == 0
    code, output = attunebench("merge", str(shards[0]), str(other), "--out", str(tmp_path / "x"))
    assert code == 2 and "person" in output


def test_a_twin_is_judged_on_the_conversation_as_it_happened(tmp_path: Path) -> None:
    out = tmp_path / "judged"
    code, output = attunebench(
        "run",
        "--data",
        str(SAMPLE),
        "--limit",
        "3",
        "--task",
        "response",
        "--task",
        "judge_audit",
        "--model",
        "mock/default",
        "--judge",
        "mock/default",
        "--person",
        "both",
        "--out",
        str(out),
        "--no-cache",
        "--no-progress",
    )
    assert code == 0, output
    records = read_records(out / "records.jsonl")
    audits = [r for r in records if r.task == "judge_audit"]
    assert audits and not any(is_person_hidden(r.variant) for r in audits)
    twins_judged = [r for r in records if r.task == "response" and is_person_hidden(r.variant)]
    assert twins_judged
    conversations = {c.id: c for c in read_conversations(SAMPLE)}
    for record in twins_judged:
        said = conversations[record.conversation_id].turns[0].user
        assert record.verdicts and all(said in v.rendered_prompt for v in record.verdicts)
        assert all(PLACEHOLDER not in v.rendered_prompt for v in record.verdicts)


def test_a_wrong_person_is_one_clear_line(base: list[str], tmp_path: Path) -> None:
    code, output = attunebench(*base, "--out", str(tmp_path / "r"), "--person", "nobody")
    assert code == 2
    assert "--person must be one of shown, hidden, both (got 'nobody')" in output
    assert not (tmp_path / "r").exists()


def test_an_items_twin_is_made_from_the_item_not_the_other_way(tmp_path: Path) -> None:
    """The gold is built on the real conversation: a twin made from a hidden copy would lose
    what the gold reads off the person's words (emotion's character count)."""
    conversations = read_conversations(SAMPLE)[:3]
    task = load_tasks().get("emotion")()
    shown = list(task.items(conversations))
    from_hidden = list(task.items([data_person.hide_person(c) for c in conversations]))
    twinned = list(person_twins(shown, "hidden"))
    assert [t.gold for t in twinned] == [i.gold for i in shown]
    assert [i.gold for i in from_hidden] != [i.gold for i in shown]  # the trap is real
    assert isinstance(twinned[0], Item)
