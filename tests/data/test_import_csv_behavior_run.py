"""A corpus with its own behavior codes, imported as the README shows, then scored by
`attunebench run --task behavior` with every baseline that answers behavior items."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import Taxonomy, read_conversations

FIXTURES = Path(__file__).parent / "fixtures"
MI_OPTIONS = [
    "--conversation-col",
    "session",
    "--order-col",
    "n",
    "--speaker-col",
    "role",
    "--user-speaker",
    "client",
    "--text-col",
    "utterance",
    "--behavior-col",
    "code",
    "--name",
    "counselling",
    "--provenance",
    "behaviors=third-party",
]


def _attunebench(*args: str) -> str:
    run = CliRunner().invoke(app, list(args))
    assert run.exit_code == 0, run.output
    return run.output


def _f1(predicted: set[str], gold: set[str]) -> float:
    if not predicted and not gold:
        return 1.0
    return 2 * len(predicted & gold) / (len(predicted) + len(gold))


def test_baselines_score_a_corpus_with_its_own_behavior_codes(tmp_path: Path) -> None:
    train, test = tmp_path / "train.jsonl", tmp_path / "test.jsonl"
    csv_import = ("data", "import", "csv")
    _attunebench(
        *csv_import,
        str(FIXTURES / "mi_sessions_train.csv"),
        "-o",
        str(train),
        *MI_OPTIONS,
        "--taxonomy-from-data",
    )
    codes = tmp_path / "train.taxonomy.json"
    _attunebench(
        *csv_import,
        str(FIXTURES / "mi_sessions_test.csv"),
        "-o",
        str(test),
        *MI_OPTIONS,
        "--taxonomy",
        str(codes),
    )
    taxonomy = Taxonomy.model_validate_json(codes.read_text(encoding="utf-8"))
    labels = taxonomy.behavior_names()
    assert labels == {"SR", "CR", "OQ", "CQ", "AF", "GI"}
    gold = {
        (c.id, t.index): set(r.behaviors)
        for c in read_conversations(test)
        for t in c.turns
        for r in t.responses
        if r.behaviors
    }
    assert len(gold) == 4 and all(c.taxonomy == taxonomy for c in read_conversations(test))

    models = [
        "baseline/random",
        f"baseline/majority?train={train}",
        f"baseline/knn?train={train}&k=1",
        "baseline/lexicon",
    ]
    out = tmp_path / "run"
    _attunebench(
        "run",
        "--data",
        str(test),
        "--task",
        "behavior",
        "--out",
        str(out),
        "--no-progress",
        "--cache",
        str(tmp_path / "cache.sqlite"),
        *(arg for model in models for arg in ("--model", model)),
    )
    records = [json.loads(line) for line in (out / "records.jsonl").open(encoding="utf-8")]
    names = {model.partition("?")[0] for model in models}  # fitted baselines: short names
    assert {r["model"] for r in records} == names
    for model in names:
        mine = [r for r in records if r["model"] == model]
        assert {(r["conversation_id"], r["turn_index"]) for r in mine} == set(gold), model
        for record in mine:
            assert record["status"] == "ok", record
            predicted = set(record["prediction"]["behaviors"])
            expected = gold[(record["conversation_id"], record["turn_index"])]
            assert set(record["gold"]["behaviors"]) == expected
            assert predicted <= labels
            assert record["score"] == _f1(predicted, expected)
    majority = {
        frozenset(r["prediction"]["behaviors"]) for r in records if "majority" in r["model"]
    }
    assert len(majority) == 1  # one answer, learned from the train split's codes
    lexicon = [r["prediction"]["behaviors"] for r in records if r["model"] == "baseline/lexicon"]
    assert lexicon == [[]] * 4  # a lexicon cannot tell what a reply does, and says so


def test_a_code_the_train_split_never_used_is_refused_by_name(tmp_path: Path) -> None:
    codes = tmp_path / "codes.taxonomy.json"
    _attunebench(
        "data",
        "import",
        "csv",
        str(FIXTURES / "mi_sessions_train.csv"),
        "-o",
        str(tmp_path / "codes.jsonl"),
        *MI_OPTIONS,
        "--taxonomy-from-data",
    )
    extra = tmp_path / "extra.csv"
    extra.write_text(
        (FIXTURES / "mi_sessions_test.csv").read_text(encoding="utf-8")
        + "t3,1,client,I can't stop checking my phone.,\nt3,2,counsellor,So you'd like to.,RF\n",
        encoding="utf-8",
    )
    run = CliRunner().invoke(
        app,
        [
            "data",
            "import",
            "csv",
            str(extra),
            "-o",
            str(tmp_path / "extra.jsonl"),
            *MI_OPTIONS,
            "--taxonomy",
            str(codes),
        ],
    )
    assert run.exit_code == 1 and "Traceback" not in run.output
    assert (
        f"{extra}:11: code: 1 label is not in taxonomy 'counselling-labels': code 'RF'"
        in run.output
    )
