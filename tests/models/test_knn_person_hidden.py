"""`baseline/knn` gets a person-hidden twin for free: its hints read the conversation the twin's
prompts read, so with the person's words hidden it reads only the replies.

Two evaluated datasets that differ only in what the person wrote: knn's answers to the twins
must be the same on both (nothing of the person is left to read), while its answers to the
shown items differ (it does read the person's words where it is shown them)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation
from attunebench.engine import RECORDS_FILE, RunConfig, read_records, run
from attunebench.models.baselines import KnnBaseline
from attunebench.models.baselines.knn import KnnOptions
from attunebench.models.modelsfile import ModelEntry
from attunebench.tasks.helpers.twins import is_person_hidden

sys.path.insert(0, str(Path(__file__).parent))
from knn_harness import HashEncoder

SPEC = "baseline/knn"
OTHER_WORDS = ("anger", "work", "tired", "happy", "sorry", "help", "lonely", "exam")


def reworded(conversation: Conversation, shift: int) -> Conversation:
    """The same conversation, the person's messages and situation in other words."""
    turns = tuple(
        turn.model_copy(
            update={"user": f"I feel {OTHER_WORDS[(i + shift) % len(OTHER_WORDS)]} about it"}
        )
        for i, turn in enumerate(conversation.turns)
    )
    context = conversation.context.model_copy(update={"situation": "Something else happened."})
    return conversation.model_copy(update={"turns": turns, "context": context})


async def knn_answers(data: Path, train: Path, out: Path) -> dict[tuple[Any, ...], Any]:
    knn = KnnBaseline(SPEC, KnnOptions(train=train, k=3), encoder=HashEncoder())
    config = RunConfig(
        data=data,
        out=out,
        models=(ModelEntry(name=SPEC, spec=SPEC),),
        person="both",
        cache_path=None,
        progress=False,
    )
    result = await run(config, providers={SPEC: knn})
    assert result.complete
    return {r.key[:1] + r.key[2:]: r.prediction for r in read_records(out / RECORDS_FILE)}


async def test_knn_with_the_person_hidden_reads_only_the_replies(tmp_path: Path) -> None:
    conversations = read_conversations(sample_path())
    train, evaluated = conversations[:6], conversations[6:]
    write_conversations(tmp_path / "train.jsonl", train)
    write_conversations(tmp_path / "as-said.jsonl", evaluated)
    write_conversations(
        tmp_path / "reworded.jsonl", [reworded(c, i) for i, c in enumerate(evaluated)]
    )
    said = await knn_answers(tmp_path / "as-said.jsonl", tmp_path / "train.jsonl", tmp_path / "a")
    other = await knn_answers(tmp_path / "reworded.jsonl", tmp_path / "train.jsonl", tmp_path / "b")
    assert said.keys() == other.keys()
    twins = [key for key in said if is_person_hidden(key[-1])]
    tasks = {key[0] for key in twins}
    assert {"emotion", "behavior", "preference", "outcome"} <= tasks
    assert all(said[key] == other[key] for key in twins)  # nothing of the person to read
    shown = [key for key in said if not is_person_hidden(key[-1]) and key[0] == "emotion"]
    assert any(said[key] != other[key] for key in shown)  # shown, it does read their words
