"""`data split`: whole conversations to train and test, seeded, stratified by a field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation
from attunebench.data.split import SplitError, split


def corpus(sizes: dict[str, int]) -> list[Conversation]:
    """Conversations grouped by context emotion, in file order by group (a sorted file)."""
    base = read_conversations(sample_path())[0]
    made = []
    for emotion, size in sizes.items():
        for i in range(size):
            context = base.context.model_copy(update={"emotion": emotion})
            made.append(base.model_copy(update={"id": f"{emotion}-{i}", "context": context}))
    return made


def test_each_stratum_keeps_its_share_on_both_sides() -> None:
    conversations = corpus({"anger": 10, "fear": 20, "joy": 30})
    made = split(conversations, 0.8, seed=3, stratify="context.emotion")
    assert made.strata == {"anger": (8, 2), "fear": (16, 4), "joy": (24, 6)}
    train, test = {c.id for c in made.train}, {c.id for c in made.test}
    assert not train & test and train | test == {c.id for c in conversations}
    for emotion, (to_train, _) in made.strata.items():
        assert sum(c.context.emotion == emotion for c in made.train) == to_train


def test_the_seed_fixes_the_split_and_a_sorted_file_is_not_cut_in_order() -> None:
    conversations = corpus({"anger": 50, "joy": 50})
    first = split(conversations, 0.8, seed=0)
    assert [c.id for c in split(conversations, 0.8, seed=0).test] == [c.id for c in first.test]
    assert [c.id for c in split(conversations, 0.8, seed=1).test] != [c.id for c in first.test]
    # the trap: taking the first 80% of a sorted file would leave only `joy` in test; over many
    # seeds each position lands in test about 20% of the time, wherever it is in the file
    position = {c.id: i for i, c in enumerate(conversations)}
    tested = [position[c.id] for seed in range(200) for c in split(conversations, 0.8, seed).test]
    assert abs(np.mean(tested) - 49.5) < 3
    assert np.bincount(tested, minlength=100).min() > 20  # 40 expected for each position


def test_refusals() -> None:
    conversations = corpus({"anger": 3})
    with pytest.raises(SplitError, match="no conversation has this field"):
        split(conversations, 0.8, 0, stratify="context.nothing")
    with pytest.raises(SplitError, match="between 0 and 1"):
        split(conversations, 80, 0)
    tiny = split(corpus({"anger": 2}), 0.9, 0)
    assert (len(tiny.train), len(tiny.test)) == (1, 1)  # never an empty side


def test_the_command_writes_two_valid_files(tmp_path: Path) -> None:
    data = tmp_path / "all.jsonl"
    write_conversations(data, corpus({"anger": 5, "joy": 5}))
    args = ["data", "split", str(data), "--train", "0.6", "--seed", "2"]
    result = CliRunner().invoke(app, [*args, "--stratify", "context.emotion"])
    assert result.exit_code == 0, result.output
    train = read_conversations(tmp_path / "all.train.jsonl")
    test = read_conversations(tmp_path / "all.test.jsonl")
    assert (len(train), len(test)) == (6, 4)
    assert "context.emotion = joy: 3 train, 2 test" in result.output
