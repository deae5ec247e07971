"""ESConv: the counts in esconv/SOURCE.md, the mapping rules, and clear errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from import_harness import imported, message_lines, prefixed
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import Conversation
from attunebench.data.importers import ESConvImporter, ImportFormatError, ImportResult
from attunebench.data.taxonomy import load_taxonomy

Imported = tuple[list[Conversation], ImportResult]

EMOTION_TYPES = {
    "anxiety": 354,
    "depression": 334,
    "sadness": 308,
    "anger": 111,
    "fear": 95,
    "shame": 42,
    "disgust": 40,
    "nervousness": 13,
    "guilt": 1,
    "jealousy": 1,
    "pain": 1,
}
PROBLEM_TYPES = {
    "ongoing depression": 351,
    "job crisis": 280,
    "breakup with partner": 239,
    "problems with friends": 179,
    "academic pressure": 156,
    "Sleep Problems": 28,
    "Procrastination": 13,
    "Appearance Anxiety": 12,
    "Alcohol Abuse": 12,
    "conflict with parents": 10,
    "Issues with Children": 10,
    "Issues with Parents": 8,
    "School Bullying": 2,
}
STRATEGIES = {
    "Question": 3801,
    "Others": 3341,
    "Providing Suggestions": 2954,
    "Affirmation and Reassurance": 2827,
    "Self-disclosure": 1713,
    "Reflection of feelings": 1436,
    "Information": 1215,
    "Restatement or Paraphrasing": 1089,
}


@pytest.fixture(scope="module")
def hf(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Imported:
    out = tmp_path_factory.mktemp("esconv") / "hf.jsonl"
    return imported(ESConvImporter(variant="hf"), data_dir / "esconv", out)


@pytest.fixture(scope="module")
def failed(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Imported:
    out = tmp_path_factory.mktemp("esconv") / "failed.jsonl"
    return imported(ESConvImporter(variant="failed"), data_dir / "esconv", out)


def test_hf_dialogue_and_utterance_counts(hf: Imported) -> None:
    conversations, result = hf
    by_split = Counter(c.id.split("-")[1] for c in conversations)
    assert by_split == {"train": 910, "valid": 195, "test": 195}
    # HF texts hold no newlines, so merged messages still tell how many utterances they hold.
    assert message_lines(conversations) == (19_989, 18_376)
    assert result.tally["utterances:seeker"] == 19_989
    assert result.tally["utterances:supporter"] == 18_376
    assert prefixed(result.tally, "strategy") == STRATEGIES


def test_hf_conversation_level_labels(hf: Imported) -> None:
    conversations, _ = hf
    assert Counter(c.context.emotion for c in conversations) == EMOTION_TYPES
    assert Counter(c.context.labels["problem_type"] for c in conversations) == PROBLEM_TYPES
    # emotion_type is conversation-level: no turn carries an emotion label.
    assert not any(t.state and t.state.emotions for c in conversations for t in c.turns)


def test_hf_intensities_and_survey(hf: Imported) -> None:
    conversations, _ = hf
    initial = Counter(c.turns[0].state.intensity for c in conversations if c.turns[0].state)
    assert initial == {1: 2, 2: 37, 3: 267, 4: 567, 5: 427}
    # only the first turn carries the pre-chat intensity
    assert not any(t.state for c in conversations for t in c.turns[1:])
    outcomes = [c.outcome for c in conversations if c.outcome and c.outcome.final_state]
    assert Counter(o.final_state.intensity for o in outcomes if o.final_state) == {
        1: 329,
        2: 469,
        3: 290,
        4: 62,
    }
    assert len(conversations) - len(outcomes) == 150
    surveys = [c.outcome.survey for c in conversations if c.outcome]
    assert Counter(s["empathy"] for s in surveys if "empathy" in s) == {
        1: 4,
        2: 7,
        3: 114,
        4: 295,
        5: 730,
    }
    assert Counter(s["relevance"] for s in surveys if "relevance" in s) == {
        2: 9,
        3: 79,
        4: 272,
        5: 790,
    }


def test_hf_source_declares_who_labelled(hf: Imported) -> None:
    conversations, result = hf
    source = conversations[0].source
    assert source.kind == "imported" and "CC BY-NC 4.0" in (source.license or "")
    assert source.provenance == {
        "context.emotion": "first-person",
        "state.intensity": "first-person",
        "behaviors": "actor",
        "outcome": "first-person",
    }
    assert "the actor's labels, not the seeker's" in (source.notes or "")
    assert "rating" not in source.provenance  # the HF splits carry no feedback
    assert not any(r.rating for c in conversations for t in c.turns for r in t.responses)
    assert conversations[0].id == "esconv-train-0000"
    # outcome is the seeker's: the supporter's own survey answers are counted, not kept
    keys = {key for c in conversations if c.outcome for key in c.outcome.survey}
    assert keys == {"empathy", "relevance", "seeker_question1", "seeker_question2"}
    assert result.dropped()["supporter survey answers"] > 1_000


def test_failed_counts_and_old_spellings(failed: Imported) -> None:
    conversations, result = failed
    assert len(conversations) == 196
    assert message_lines(conversations)[0] >= 2_853  # FailedESConv texts can hold newlines
    assert result.tally["utterances:seeker"] == 2_853
    assert result.tally["utterances:supporter"] == 2_377
    assert prefixed(result.tally, "feedback") == {"1": 172, "2": 174, "3": 264, "4": 209, "5": 168}
    strategies = prefixed(result.tally, "strategy")
    assert strategies["Questions"] == 520 and strategies["Other"] == 400
    assert strategies["Direct Guidance"] == 11
    assert strategies["Approval and Reassurance"] == 7 and strategies["Restatement"] == 3
    behaviors = {
        b for c in conversations for t in c.turns for r in t.responses for b in r.behaviors
    }
    assert behaviors <= load_taxonomy("esconv").behavior_names()
    assert "Question" in behaviors and "Questions" not in behaviors
    assert sum(1 for c in conversations if c.outcome and c.outcome.final_state) == 142


def test_failed_feedback_becomes_first_person_ratings(failed: Imported) -> None:
    conversations, _ = failed
    source = conversations[0].source
    assert source.provenance["rating"] == "first-person"
    assert source.rating_scale is not None and (
        source.rating_scale.low,
        source.rating_scale.high,
    ) == (1, 5)
    ratings = [r.rating for c in conversations for t in c.turns for r in t.responses if r.rating]
    assert ratings and set(ratings) <= {1, 2, 3, 4, 5}


@pytest.mark.parametrize(
    ("split", "merged", "feedback"),
    [
        ("valid", 4_467, {"1": 9, "2": 30, "3": 191, "4": 322, "5": 570}),
        ("test", 4_752, {"1": 9, "2": 25, "3": 197, "4": 405, "5": 582}),
    ],
)
def test_multiesc_feedback_on_original_text(
    data_dir: Path, tmp_path: Path, split: str, merged: int, feedback: dict[str, int]
) -> None:
    folder = data_dir / "esconv"
    multi, result = imported(ESConvImporter("multiesc", split), folder, tmp_path / "m.jsonl")
    original, _ = imported(ESConvImporter("hf", split), folder, tmp_path / "hf.jsonl")
    assert len(multi) == 195
    assert prefixed(result.tally, "feedback") == feedback
    # MultiESC counts merged utterances: one per user message, reply and opening.
    blocks = sum(len(c.turns) + sum(len(t.responses) for t in c.turns) for c in multi)
    assert blocks + sum(1 for c in multi if c.context.opening) == merged
    # text and strategies are the HF split's (untokenised), only ratings are added
    assert [t.user for c in multi for t in c.turns] == [t.user for c in original for t in c.turns]
    assert "I ' m" not in "".join(t.user for c in multi for t in c.turns)
    assert sum(1 for c in multi for t in c.turns for r in t.responses if r.rating) > 1_000
    assert multi[0].id == f"esconv-multiesc-{split}-0000"


def _failed_file(folder: Path, dialog: list[dict[str, object]]) -> Path:
    folder.mkdir(exist_ok=True)
    record = {
        "experience_type": "Current Experience",
        "emotion_type": "anxiety",
        "problem_type": "job crisis",
        "situation": "Worried about work.",
        "survey_score": {"seeker": {"initial_emotion_intensity": "4"}, "supporter": {}},
        "dialog": dialog,
    }
    (folder / "FailedESConv.json").write_text(json.dumps([record]), encoding="utf-8")
    return folder


def _say(speaker: str, content: str, **annotation: str) -> dict[str, object]:
    return {"speaker": speaker, "annotation": annotation, "content": content}


def test_feedback_rates_every_reply_since_the_previous_feedback(tmp_path: Path) -> None:
    folder = _failed_file(
        tmp_path / "esconv",
        [
            _say("listener", "Hi there.", strategy="Other"),
            _say("speaker", "I am worried."),
            _say("listener", "Why?", strategy="Questions"),
            _say("listener", "Tell me more.", strategy="Questions"),
            _say("speaker", "My job.", feedback="4"),
            _say("listener", "That sounds hard.", strategy="Reflection of feelings"),
            _say("speaker", "It is."),
            _say("listener", "Maybe talk to HR.", strategy="Providing Suggestions"),
            _say("speaker", "Thanks.", feedback="2"),
            _say("speaker", "Bye.", feedback="5"),
            _say("listener", "Take care.", strategy="Other"),
        ],
    )
    [conversation], result = imported(ESConvImporter("failed"), folder, tmp_path / "out.jsonl")
    assert conversation.context.opening == "Hi there."
    assert conversation.context.emotion == "anxiety"
    turns = conversation.turns
    assert [t.user for t in turns] == ["I am worried.", "My job.", "It is.", "Thanks.\nBye."]
    first = turns[0].responses[0]
    assert first.text == "Why?\nTell me more." and first.behaviors == ("Question",)
    assert [t.responses[0].rating for t in turns] == [4, 2, 2, None]
    assert [t.feedback for t in turns] == [None, 4, None, 2]  # where each rating was given
    assert turns[0].state is not None and turns[0].state.intensity == 4
    assert turns[0].continued == first.id
    assert result.dropped() == {
        "feedback ratings with no new reply to rate": 1,
        "labels of opening utterances": 1,
    }


def test_bad_json_line_names_file_line_and_field(tmp_path: Path, data_dir: Path) -> None:
    folder = tmp_path / "esconv"
    folder.mkdir()
    good = (data_dir / "esconv" / "valid.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (folder / "train.jsonl").write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"train\.jsonl:2: json: "):
        imported(ESConvImporter("hf", "train"), folder, tmp_path / "out.jsonl")
    record = json.loads(good)
    record["dialog"][1]["speaker"] = "therapist"
    (folder / "train.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"train\.jsonl:1: dialog\[1\]\.speaker: "):
        imported(ESConvImporter("hf", "train"), folder, tmp_path / "out.jsonl")
    record["dialog"][1] = {"speaker": "sys", "text": "Hi", "strategy": "Hypnosis"}
    (folder / "train.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"dialog\[1\]\.strategy: label 'Hypnosis'"):
        imported(ESConvImporter("hf", "train"), folder, tmp_path / "out.jsonl")


def test_cli_error_leaves_no_partial_output(tmp_path: Path, data_dir: Path) -> None:
    folder = tmp_path / "esconv"
    folder.mkdir()
    lines = (data_dir / "esconv" / "valid.jsonl").read_text(encoding="utf-8").splitlines()
    (folder / "valid.jsonl").write_text(
        "\n".join([*lines[:50], lines[50][:-20]]) + "\n", encoding="utf-8"
    )
    out = tmp_path / "out.jsonl"
    out.write_text("previous contents\n", encoding="utf-8")
    run = CliRunner().invoke(
        app, ["data", "import", "esconv", str(folder), "--split", "valid", "-o", str(out)]
    )
    assert run.exit_code == 1
    assert "valid.jsonl:51: json:" in run.output
    assert "Traceback" not in run.output
    assert out.read_text(encoding="utf-8") == "previous contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["esconv", "out.jsonl"]  # no temp file


def test_cli_reads_the_data_dir_and_limits(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTUNEBENCH_DATA_DIR", str(data_dir))
    out = tmp_path / "few.jsonl"
    run = CliRunner().invoke(app, ["data", "import", "esconv", "--limit", "3", "--out", str(out)])
    assert run.exit_code == 0, run.output
    assert "wrote 3 conversations" in run.output
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3
    wrong = CliRunner().invoke(
        app,
        ["data", "import", "esconv", "--variant", "multiesc", "--split", "train", "-o", str(out)],
    )
    assert wrong.exit_code == 1 and "split 'train' is not one of: valid, test" in wrong.output


@pytest.mark.parametrize(
    ("variant", "split"),
    [
        ("hf", "train"),
        ("hf", "valid"),
        ("hf", "test"),
        ("failed", "all"),
        ("multiesc", "valid"),
        ("multiesc", "test"),
    ],
)
def test_stats_count_the_seekers_outcome_and_rating_gold(
    data_dir: Path, tmp_path: Path, variant: str, split: str
) -> None:
    out = tmp_path / "esconv.jsonl"
    _, result = imported(ESConvImporter(variant, split), data_dir / "esconv", out)
    run = CliRunner().invoke(app, ["data", "stats", str(out), "--json"])
    assert run.exit_code == 0, run.output
    stats = json.loads(run.output)
    outcome, rating = stats["gold"]["outcome"], stats["gold"]["rating"]
    # the seekers' post-chat answers, read from the corpus file itself
    folder = data_dir / "esconv"
    if variant == "failed":
        raw = json.loads((folder / "FailedESConv.json").read_text(encoding="utf-8"))
    else:
        raw = [json.loads(line) for line in (folder / f"{split}.jsonl").open(encoding="utf-8")]
    seekers = [dialogue["survey_score"]["seeker"] for dialogue in raw]
    post = ("final_emotion_intensity", "empathy", "relevance")
    with_numbers = sum(1 for seeker in seekers if any(seeker.get(key) for key in post))
    assert outcome["conversations"] == with_numbers > 0
    assert outcome["with_final_intensity"] == sum(
        1 for seeker in seekers if seeker.get("final_emotion_intensity")
    )
    assert outcome["survey_ratings"] == {
        key: sum(1 for seeker in seekers if seeker.get(key)) for key in ("empathy", "relevance")
    }
    assert stats["given_by"]["outcome"] == {"first-person": with_numbers}
    assert stats["given_by"]["behavior"] == {
        "actor": stats["gold"]["behavior"]["responses_with_behaviors"]
    }
    feedback = sum(prefixed(result.tally, "feedback").values())
    unrated = result.dropped().get("feedback ratings with no new reply to rate", 0)
    # each feedback that had new replies to rate is one rating item, on the turn that gave it
    assert rating["feedback_turns"] == feedback - unrated
    if variant == "hf":
        assert rating["responses"] == feedback == 0
    else:
        assert rating["responses"] >= rating["feedback_turns"] > 0
        assert stats["given_by"]["rating"] == {"first-person": rating["responses"]}
        assert stats["given_by"]["feedback"] == {"first-person": rating["feedback_turns"]}
