"""The CSV importer on corpora held out from its design: composite keys, several annotators per
utterance, repeated order values, labels on rows that cannot carry them, conversation-level
columns, a user speaker who is not there, and who gave which label."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from import_harness import imported
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import read_conversations
from attunebench.data.importers import CsvImporter, ImportFormatError, ImportOptionError

SITCOM = Path(__file__).parent / "fixtures" / "sitcom_scenes.csv"
SCENE_KEY = ["season", "episode", "scene"]


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([header, *rows])
    return path


def _scenes(**options: object) -> CsvImporter:
    fixed: dict[str, object] = {
        "conversation_col": SCENE_KEY,
        "speaker_col": "speaker",
        "text_col": "utterance",
        "order_col": "line",
        "emotion_col": "emotion",
        "taxonomy": "meld",
        "name": "sitcom",
    }
    return CsvImporter(**{**fixed, **options})  # type: ignore[arg-type]


def test_a_composite_key_keeps_scenes_of_different_episodes_apart(tmp_path: Path) -> None:
    conversations, result = imported(_scenes(), SITCOM, tmp_path / "out.jsonl")
    assert [c.id for c in conversations] == ["sitcom-1-1-1", "sitcom-1-1-2", "sitcom-1-2-1"]
    first = conversations[0]
    assert [t.user for t in first.turns] == [
        "There's nothing to tell!",
        "He's just some guy I work with.",
    ]
    assert first.turns[0].responses[0].text == "C'mon, you're going out with the guy!"
    # the other speakers' emotions have no field: counted, not silently lost
    assert result.dropped()["emotion labels on reply rows"] == 3


def test_a_key_value_seen_again_after_other_conversations_is_refused(tmp_path: Path) -> None:
    rows = list(csv.reader(SITCOM.open(encoding="utf-8")))
    source = _write(
        tmp_path / "scenes.csv", rows[0], [*rows[1:], ["1", "1", "1", "9", "Ross", "Hi.", "joy"]]
    )
    with pytest.raises(
        ImportFormatError,
        match=r"scenes\.csv:10: season/episode/scene: conversation '1/1/1' continues",
    ):
        imported(_scenes(), source, tmp_path / "out.jsonl")


def test_ids_that_would_clash_are_refused(tmp_path: Path) -> None:
    header = ["a", "b", "who", "text"]
    rows = [["x-y", "z", "me", "Hi"], ["x", "y-z", "me", "Hello"]]
    source = _write(tmp_path / "clash.csv", header, rows)
    importer = CsvImporter(conversation_col=["a", "b"], speaker_col="who", text_col="text")
    with pytest.raises(
        ImportFormatError,
        match=r"clash\.csv:3: a/b: id 'clash-x-y-z' is also the id of the conversation on line 2",
    ):
        imported(importer, source, tmp_path / "out.jsonl")


ANNOTATED = [
    ["c1", "1", "ann1", "me", "I lost my job today.", "sadness,fear", "", ""],
    ["c1", "1", "ann2", "me", "I lost my job today.", "sadness", "", ""],
    ["c1", "1", "ann3", "me", "I lost my job today.", "anger", "", ""],
    ["c1", "2", "ann1", "bot", "That is a real blow.", "", "validation", "3"],
    ["c1", "2", "ann2", "bot", "That is a real blow.", "", "validation,reflection", "5"],
    ["c1", "2", "ann3", "bot", "That is a real blow.", "", "reflection", "4"],
]
ANNOTATED_HEADER = ["conv", "pos", "annotator", "who", "text", "emotion", "behavior", "rating"]


@pytest.mark.parametrize(
    ("how", "emotions", "behaviors", "rating"),
    [
        ("majority", ("sadness",), ("validation", "reflection"), 4.0),
        ("union", ("sadness", "fear", "anger"), ("validation", "reflection"), 4.0),
        ("first", ("sadness", "fear"), ("validation",), 3.0),
    ],
)
def test_several_annotators_of_one_utterance_are_merged(
    tmp_path: Path, how: str, emotions: tuple[str, ...], behaviors: tuple[str, ...], rating: float
) -> None:
    source = _write(tmp_path / "annotated.csv", ANNOTATED_HEADER, ANNOTATED)
    importer = CsvImporter(
        conversation_col=["conv"],
        speaker_col="who",
        text_col="text",
        emotion_col="emotion",
        behavior_col="behavior",
        rating_col="rating",
        rating_low=1,
        rating_high=5,
        order_col="pos",
        annotator_col="annotator",
        annotator_merge=how,
    )
    [conversation], result = imported(importer, source, tmp_path / "out.jsonl")
    [turn] = conversation.turns
    assert turn.user == "I lost my job today."  # once, not once per annotator
    assert turn.responses[0].text == "That is a real blow."
    assert turn.state and turn.state.emotions == emotions
    assert turn.responses[0].behaviors == behaviors
    assert turn.responses[0].rating == rating  # the mean, or the first annotator's
    assert result.notes() == {
        f"annotator rows merged into one utterance each ({how})": 4,
        "reply ratings made rating items (their conversations rate nothing on user rows)": 1,
    }
    assert how in (conversation.source.notes or "")
    if how == "majority":
        assert result.dropped()["labels fewer than half an utterance's annotators gave"] == 2


def test_annotators_must_agree_on_the_text(tmp_path: Path) -> None:
    rows = [*ANNOTATED[:1], ["c1", "1", "ann2", "me", "I lost my job.", "sadness", "", ""]]
    source = _write(tmp_path / "annotated.csv", ANNOTATED_HEADER, rows)
    importer = CsvImporter(
        conversation_col=["conv"],
        speaker_col="who",
        text_col="text",
        order_col="pos",
        annotator_col="annotator",
    )
    with pytest.raises(ImportFormatError, match=r"annotated\.csv:3: text: differs from line 2"):
        imported(importer, source, tmp_path / "out.jsonl")


def test_repeated_order_values_are_an_error_unless_kept(tmp_path: Path) -> None:
    rows = [["c1", "1", "me", "Hello"], ["c1", "2", "bot", "Hi"], ["c1", "2", "bot", "Hey"]]
    source = _write(tmp_path / "chats.csv", ["conv", "pos", "who", "text"], rows)
    out = tmp_path / "out.jsonl"
    args = ["data", "import", "csv", str(source), "-o", str(out), "--conversation-col", "conv"]
    args += ["--speaker-col", "who", "--text-col", "text", "--order-col", "pos"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 1 and not out.exists()
    assert "chats.csv:4: pos: repeats the pos 2 of line 3" in refused.output
    assert "--annotator-col" in refused.output and "--keep-duplicate-rows" in refused.output
    kept = CliRunner().invoke(app, [*args, "--keep-duplicate-rows"])
    assert kept.exit_code == 0, kept.output
    assert "warning: 1 rows repeating another row's pos in their conversation" in kept.output
    [conversation] = read_conversations(out)
    assert conversation.turns[0].responses[0].text == "Hi\nHey"  # file order kept


def test_labels_on_rows_that_cannot_carry_them_are_counted(tmp_path: Path) -> None:
    rows = [
        ["c1", "me", "Help", "sadness", "question"],
        ["c1", "bot", "Sure", "joy,hope", "question"],
    ]
    source = _write(tmp_path / "chats.csv", ["conv", "who", "text", "emotion", "behavior"], rows)
    importer = CsvImporter(
        conversation_col=["conv"],
        speaker_col="who",
        text_col="text",
        emotion_col="emotion",
        behavior_col="behavior",
    )
    [conversation], result = imported(importer, source, tmp_path / "out.jsonl")
    assert result.dropped() == {
        "behavior labels on user rows": 1,
        "emotion labels on reply rows": 2,
    }
    assert conversation.turns[0].responses[0].behaviors == ("question",)


def test_conversation_level_columns(tmp_path: Path) -> None:
    header = ["conv", "who", "text", "genre", "prompt", "feeling", "quality"]
    rows = [
        ["c1", "me", "My dog ran off.", "pets", "Lost dog", "afraid", "good"],
        ["c1", "bot", "Oh no, when?", "", "", "", "good"],
        ["c2", "me", "I passed!", "school", "", "joyful", ""],
    ]
    source = _write(tmp_path / "chats.csv", header, rows)
    importer = CsvImporter(
        conversation_col=["conv"],
        speaker_col="who",
        text_col="text",
        context_col=["topic=genre", "situation=prompt", "emotion=feeling", "quality"],
        provenance="context.emotion=first-person",
    )
    first, second = imported(importer, source, tmp_path / "out.jsonl")[0]
    assert (first.context.topic, first.context.situation, first.context.emotion) == (
        "pets",
        "Lost dog",
        "fear",
    )
    assert first.context.labels == {"quality": "good"}
    assert (second.context.topic, second.context.emotion, second.context.labels) == (
        "school",
        "joy",
        {},
    )
    assert first.source.provenance == {"context.emotion": "first-person"}
    rows[1][3] = "cats"
    source = _write(tmp_path / "chats.csv", header, rows)
    with pytest.raises(
        ImportFormatError, match=r"chats\.csv:3: genre: 'cats' differs from 'pets' on line 2"
    ):
        imported(importer, source, tmp_path / "out.jsonl")
    with pytest.raises(ImportOptionError, match="'mood' is not one of topic, situation, emotion"):
        imported(
            CsvImporter(["conv"], "who", "text", context_col=["mood=genre"]),
            source,
            tmp_path / "o.jsonl",
        )


def test_a_user_speaker_who_is_nobody_is_an_error(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    run = CliRunner().invoke(
        app,
        [
            "data",
            "import",
            "csv",
            str(SITCOM),
            "-o",
            str(out),
            "--conversation-col",
            "season",
            "--conversation-col",
            "episode",
            "--conversation-col",
            "scene",
            "--speaker-col",
            "speaker",
            "--text-col",
            "utterance",
            "--user-speaker",
            "Phoebe",
        ],
    )
    assert run.exit_code == 1 and not out.exists()
    assert "Traceback" not in run.output
    assert (
        f"error: {SITCOM}: --user-speaker 'Phoebe' matches no speaker (speaker values" in run.output
    )
    assert "'Monica'" in run.output


@pytest.mark.parametrize(
    ("provenance", "declared"),
    [
        ("third-party", {"state": "third-party", "behaviors": "third-party"}),
        (
            ("state=first-person", "behaviors=actor"),
            {"state": "first-person", "behaviors": "actor"},
        ),
    ],
)
def test_provenance_for_all_labels_or_per_field(
    tmp_path: Path, provenance: object, declared: dict[str, str]
) -> None:
    rows = [["c1", "me", "Help", "sadness", ""], ["c1", "bot", "Sure", "", "question"]]
    source = _write(tmp_path / "chats.csv", ["conv", "who", "text", "emotion", "behavior"], rows)
    importer = CsvImporter(
        conversation_col=["conv"],
        speaker_col="who",
        text_col="text",
        emotion_col="emotion",
        behavior_col="behavior",
        provenance=provenance,  # type: ignore[arg-type]
    )
    [conversation], _ = imported(importer, source, tmp_path / "out.jsonl")
    assert conversation.source.provenance == declared


@pytest.mark.parametrize(
    ("provenance", "message"),
    [
        ("rating=first-person", "no column gives 'rating'"),
        ("self", "provenance 'self' is not one of: first-person, actor"),
    ],
)
def test_bad_provenance_is_refused(tmp_path: Path, provenance: str, message: str) -> None:
    source = _write(
        tmp_path / "chats.csv", ["conv", "who", "text", "emotion"], [["c1", "me", "Hi", "joy"]]
    )
    importer = CsvImporter(["conv"], "who", "text", emotion_col="emotion", provenance=provenance)
    with pytest.raises(ImportOptionError, match=message):
        imported(importer, source, tmp_path / "out.jsonl")
