"""The first hour's unclear messages (issue 43), each reproduced through the CLI: a fitted
baseline's missing train file says no `None:`; a judge or model spec one edit away from a known
one gets "did you mean"; `data validate` suggests `--annotator-col` only where several
annotators' rows could be the cause. (The `/v1` hint: tests/models/test_not_an_api.py.)"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from cli_harness import SAMPLE, attunebench, one_clear_line, run_args

from attunebench.data.repeats import repeats
from attunebench.data.schema import Conversation


def test_a_fitted_baselines_missing_train_file_says_no_none(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = [*run_args(tmp_path, out), "--model", "baseline/majority?train=missing.jsonl"]
    message = one_clear_line(attunebench(*args), "train split missing.jsonl does not exist")
    assert "None" not in message and "models." not in message and not out.exists()


@pytest.mark.parametrize(
    ("option", "typed", "meant"),
    [
        ("--judge", "proxy/minlm", "minilm"),
        ("--model", "baseline/majorty", "majority"),
        ("--model", "sim/oracel", "oracle"),
        ("--model", "moc/default", "mock"),
        ("--model", "local/smollm2-135m-instruc", "smollm2-135m-instruct"),
    ],
)
def test_a_spec_one_edit_away_gets_did_you_mean(
    tmp_path: Path, option: str, typed: str, meant: str
) -> None:
    out = tmp_path / "run"
    args = [*run_args(tmp_path, out), "--model", "mock/default", "--task", "response"]
    if option == "--model":
        args = [*run_args(tmp_path, out), "--model", typed]
    else:
        args += [option, typed]
    one_clear_line(attunebench(*args), f"did you mean '{meant}'?")
    assert not out.exists()


def test_a_name_near_nothing_gets_no_guess(tmp_path: Path) -> None:
    args = [*run_args(tmp_path, tmp_path / "run"), "--model", "baseline/zzz"]
    message = one_clear_line(attunebench(*args), "unknown baseline 'zzz'")
    assert "did you mean" not in message


def _chat(turns: Sequence[Mapping[str, object]]) -> str:
    return json.dumps(
        {
            "format": "attunebench/v1",
            "id": "c1",
            "source": {"kind": "imported", "name": "chit-chat"},
            "taxonomy": "attunebench-default",
            "turns": [{"index": i, **turn} for i, turn in enumerate(turns)],
        }
    )


def test_repeated_chit_chat_is_not_blamed_on_annotators(tmp_path: Path) -> None:
    """A bot repeating "hi" with no label on any turn: no annotator to merge."""
    same = {"user": "hi", "responses": [{"id": "r", "text": "hello!"}]}
    data = tmp_path / "chat.jsonl"
    data.write_text(_chat([same, same, same, {"user": "bye"}]) + "\n")
    [repeat] = repeats(Conversation.model_validate_json(data.read_text()))
    assert not repeat.annotators
    validated = attunebench("data", "validate", data)
    assert validated.exit_code == 0, validated.output
    assert "repeats 3x" in validated.output and "none labelled" in validated.output
    assert "--annotator-col" not in validated.output


def test_repeated_labelled_turns_still_name_the_flag(tmp_path: Path) -> None:
    rated = {"user": "hi", "responses": [{"id": "r", "text": "hello!", "rating": 1}]}
    data = tmp_path / "chat.jsonl"
    data.write_text(_chat([rated, rated, {"user": "bye"}]) + "\n")
    validated = attunebench("data", "validate", data)
    assert "--annotator-col" in validated.output, validated.output


def test_the_sample_has_no_repeats() -> None:
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        assert repeats(Conversation.model_validate_json(line)) == []
