"""Bring your own taxonomy: a corpus's own labels through --taxonomy FILE.json,
--taxonomy-from-data or --label-map, and one error listing every label none of them brings in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from import_harness import imported
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import Taxonomy, read_conversations
from attunebench.data.importers import CsvImporter, ImportOptionError
from attunebench.data.importers._label_sets import UnknownLabelsError
from attunebench.data.taxonomy import load_taxonomy
from attunebench.data.validate import validate_file

FIXTURES = Path(__file__).parent / "fixtures"
DIARY = FIXTURES / "mood_diary.csv"
DIARY_OPTIONS = [
    "--conversation-col",
    "chat_id",
    "--speaker-col",
    "speaker",
    "--text-col",
    "text",
    "--emotion-col",
    "mood",
    "--order-col",
    "turn",
    "--context-col",
    "topic=topic",
]


def _diary(**options: object) -> CsvImporter:
    fixed: dict[str, object] = {
        "conversation_col": ["chat_id"],
        "speaker_col": "speaker",
        "text_col": "text",
        "emotion_col": "mood",
        "order_col": "turn",
        "context_col": ["topic=topic"],
    }
    return CsvImporter(**{**fixed, **options})  # type: ignore[arg-type]


def _import(*options: str) -> tuple[int, str]:
    run = CliRunner().invoke(app, ["data", "import", "csv", *options])
    assert "Traceback" not in run.output
    return run.exit_code, run.output


def test_every_unknown_label_is_listed_in_one_error(tmp_path: Path) -> None:
    with pytest.raises(UnknownLabelsError) as caught:
        imported(_diary(), DIARY, tmp_path / "out.jsonl")
    error = caught.value
    assert error.location.line == 2 and error.field == "mood"
    # 'gloomy' and 'Gloomy' are one label; 'on edge' and 'gloomy' share a cell
    assert {label for _, label in error.unknown} == {
        "fed up",
        "on edge",
        "gloomy",
        "content",
        "wistful",
    }
    assert "mood 'gloomy' (2 rows, first line 4)" in str(error)
    for flag in ("--taxonomy FILE.json", "--taxonomy-from-data", "--label-map FILE"):
        assert flag in str(error)


def test_the_cli_refuses_unknown_labels_in_one_line_whatever_the_limit(tmp_path: Path) -> None:
    out = tmp_path / "diary.jsonl"
    code, output = _import(str(DIARY), "-o", str(out), *DIARY_OPTIONS, "--limit", "1")
    assert code == 1 and not out.exists()
    [error, nothing] = output.strip().splitlines()
    assert error.startswith(f"error: {DIARY}:2: mood: 5 labels are not in taxonomy")
    assert "'wistful' (line 9)" in error  # in the second conversation, past the limit
    assert nothing == f"nothing written to {out}"


def test_taxonomy_from_data_imports_a_corpus_with_its_own_labels(tmp_path: Path) -> None:
    out = tmp_path / "diary.jsonl"
    code, output = _import(str(DIARY), "-o", str(out), *DIARY_OPTIONS, "--taxonomy-from-data")
    assert code == 0, output
    assert validate_file(out).ok
    first, second = read_conversations(out)
    taxonomy = first.taxonomy
    assert isinstance(taxonomy, Taxonomy) and taxonomy == second.taxonomy
    assert taxonomy.id == "mood_diary-labels"
    assert [label.name for label in taxonomy.emotions] == [
        "content",
        "fed up",
        "gloomy",
        "on edge",
        "wistful",
    ]
    assert taxonomy.behaviors == ()
    assert [t.state.emotions if t.state else () for t in first.turns] == [
        ("fed up",),
        ("on edge", "gloomy"),
        ("content",),
    ]
    assert second.turns[0].state and second.turns[0].state.emotions == ("gloomy",)
    assert (first.context.topic, second.context.topic) == ("work", "family")
    # beside the output, for importing the corpus's other splits onto the same labels
    beside = tmp_path / "diary.taxonomy.json"
    assert f"written to {beside}" in output
    assert Taxonomy.model_validate_json(beside.read_text(encoding="utf-8")) == taxonomy


def test_a_taxonomy_file_is_carried_inline(tmp_path: Path) -> None:
    moods = Taxonomy(
        id="moods",
        version="1",
        emotions=tuple(
            {"name": name, "description": name}  # type: ignore[misc]
            for name in ("fed up", "on edge", "gloomy", "content", "wistful")
        ),
    )
    path = tmp_path / "moods.json"
    path.write_text(moods.model_dump_json(), encoding="utf-8")
    conversations, _ = imported(_diary(taxonomy=str(path)), DIARY, tmp_path / "out.jsonl")
    assert all(c.taxonomy == moods for c in conversations)
    assert "from moods.json" in (conversations[0].source.notes or "")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"moods\.json: taxonomy file not found"),
        ("{nope", r"moods\.json:1: not JSON"),
        (
            '{"id": "m", "version": "1", "emotions": [{"name": "x"}]}',
            r"moods\.json: emotions\[0\]\.description: Field required",
        ),
    ],
)
def test_a_bad_taxonomy_file_is_named(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "moods.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ImportOptionError, match=message):
        imported(_diary(taxonomy=str(path)), DIARY, tmp_path / "out.jsonl")


def test_a_label_map_brings_corpus_labels_onto_a_shipped_taxonomy(tmp_path: Path) -> None:
    mapping = tmp_path / "moods.map.json"
    mapping.write_text(
        json.dumps(
            {
                "emotions": {
                    "Fed up": "frustration",
                    "on edge": ["anxiety", "fear"],
                    "gloomy": "sadness",
                    "content": "calm",
                    "wistful": [],
                }
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "diary.jsonl"
    code, output = _import(str(DIARY), "-o", str(out), *DIARY_OPTIONS, "--label-map", str(mapping))
    assert code == 0, output
    assert "not imported: 1 labels the label map leaves out" in output
    first, second = read_conversations(out)
    assert first.taxonomy == "attunebench-default"
    names = load_taxonomy("attunebench-default").emotion_names()
    assert {
        e for c in (first, second) for t in c.turns if t.state for e in t.state.emotions
    } <= names
    assert first.turns[1].state and first.turns[1].state.emotions == ("anxiety", "fear", "sadness")
    assert second.turns[1].state is None  # 'wistful' was left out on purpose
    assert first.turns[0].state and first.turns[0].state.emotions == ("anger",)  # a synonym
    assert "through the label map moods.map.json" in (first.source.notes or "")


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"emotions": {"gloomy": "glum"}}, r"emotions\.gloomy: 'glum' not in taxonomy"),
        ({"moods": {}}, "a label map is an object with 'emotions' and/or 'behaviors'"),
        ({"emotions": {"gloomy": 3}}, r"emotions\.gloomy: expected a label or a list"),
    ],
)
def test_a_bad_label_map_is_named(tmp_path: Path, mapping: object, message: str) -> None:
    path = tmp_path / "moods.map.json"
    path.write_text(json.dumps(mapping), encoding="utf-8")
    with pytest.raises(ImportOptionError, match=rf"moods\.map\.json: {message}"):
        imported(_diary(label_map=path), DIARY, tmp_path / "out.jsonl")


def test_labels_a_map_leaves_unknown_are_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "moods.map.json"
    path.write_text(json.dumps({"emotions": {"gloomy": "sadness"}}), encoding="utf-8")
    with pytest.raises(UnknownLabelsError) as caught:
        imported(_diary(label_map=path), DIARY, tmp_path / "out.jsonl")
    assert {label for _, label in caught.value.unknown} == {
        "fed up",
        "on edge",
        "content",
        "wistful",
    }


def test_from_data_takes_no_other_taxonomy(tmp_path: Path) -> None:
    with pytest.raises(ImportOptionError, match="without --taxonomy or --label-map"):
        imported(_diary(taxonomy_from_data=True, taxonomy="meld"), DIARY, tmp_path / "out.jsonl")
