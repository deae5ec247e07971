"""Study files: the example is valid, and every mistake is named by file and key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attunebench.collect.study import StudyError, load_study, parse_study

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "study.toml"


def test_example_study_is_valid_and_offline() -> None:
    study = load_study(EXAMPLE)
    assert all(spec.startswith("mock/") for spec in study.pool) and len(study.pool) >= 2
    assert study.turns.min <= study.turns.max
    assert study.load_taxonomy().emotions
    assert study.retest.share == 0.1
    assert (
        parse_study({k: v for k, v in study.model_dump().items() if k != "retest"}).retest.share
        == 0
    )


def _error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "study.toml"
    body = EXAMPLE.read_text(encoding="utf-8") + "\n" + text
    path.write_text(body, encoding="utf-8")
    with pytest.raises(StudyError) as caught:
        load_study(path)
    assert str(path) in str(caught.value)
    return str(caught.value)


def test_unknown_key_is_named(tmp_path: Path) -> None:
    assert "colour: Extra inputs are not permitted" in _error(tmp_path, "[turns.colour]\n")


def test_bad_values_are_named(tmp_path: Path) -> None:
    source = EXAMPLE.read_text(encoding="utf-8")
    cases = {
        "min = 2 ": ("min = 9 ", "turns.min (9) is above turns.max"),
        'spec = "mock/quick-fixer"': ('spec = "quick-fixer"', "models.1.spec"),
        "posts_per_minute = 30": ("posts_per_minute = 0", "limits.posts_per_minute"),
        'kind = "scale"': ('kind = "slider"', "end.questions.0.kind"),
        'taxonomy = "attunebench-default"': ('taxonomy = "nope"', "taxonomy: unknown taxonomy"),
        "share = 0.1": ("share = 1.5", "retest.share"),
    }
    for old, (new, expected) in cases.items():
        path = tmp_path / "study.toml"
        assert old in source, old
        path.write_text(source.replace(old, new, 1), encoding="utf-8")
        with pytest.raises(StudyError) as caught:
            load_study(path)
        assert expected in str(caught.value), (new, str(caught.value))


def test_not_toml_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("id = \n", encoding="utf-8")
    with pytest.raises(StudyError, match="not valid TOML"):
        load_study(path)
    with pytest.raises(StudyError, match="cannot read"):
        load_study(tmp_path / "absent.toml")


def test_pool_needs_two_distinct_models() -> None:
    base = {"id": "s", "name": "S", "consent": "c", "instructions": "i"}
    with pytest.raises(StudyError, match="models"):
        parse_study({**base, "models": [{"spec": "mock/a"}]})
    with pytest.raises(StudyError, match="only once"):
        parse_study({**base, "models": [{"spec": "mock/a"}, {"spec": "mock/a"}]})


def test_taxonomy_from_a_json_file(tmp_path: Path) -> None:
    taxonomy = {
        "id": "mini",
        "version": "1",
        "emotions": [{"name": "calm", "description": "c"}],
        "behaviors": [{"name": "asks", "description": "a"}],
    }
    (tmp_path / "mini.json").write_text(json.dumps(taxonomy), encoding="utf-8")
    source = EXAMPLE.read_text(encoding="utf-8").replace(
        'taxonomy = "attunebench-default"', 'taxonomy = "mini.json"'
    )
    (tmp_path / "study.toml").write_text(source, encoding="utf-8")
    study = load_study(tmp_path / "study.toml")
    assert study.taxonomy == "mini" and study.load_taxonomy().emotion_names() == {"calm"}


def test_safety_keywords_match_whole_words() -> None:
    study = load_study(EXAMPLE)
    assert study.safety.triggered_by("Some days I want to end   my life.")
    assert study.safety.triggered_by("I feel HOPELESS")
    assert not study.safety.triggered_by("hopelessly romantic")


def test_questions_take_three_levels_and_old_studies_still_load() -> None:
    base = {
        "id": "s",
        "name": "S",
        "consent": "c",
        "instructions": "i",
        "models": [{"spec": "mock/a"}, {"spec": "mock/b"}],
    }
    with pytest.raises(StudyError, match=r"questions\.valence: Input should be 'off'"):
        parse_study({**base, "questions": {"valence": "sometimes"}})
    # A study stored before the levels: true/false, and the post-hoc answer called `wanted`.
    old = parse_study(
        {**base, "questions": {"intensity": True, "wanted": True, "behaviors": False}}
    )
    assert old.questions.intensity == "required" and old.questions.comment == "optional"
    assert old.questions.behaviors == "off"
    defaults = parse_study(base).questions
    asked = [name for name in type(defaults).model_fields if defaults.asks(name)]
    assert asked == ["emotions", "primary", "intensity", "need", "strength"]


def test_init_refuses_a_study_without_researcher_contact(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from attunebench.cli import app

    source = EXAMPLE.read_text(encoding="utf-8")
    assert load_study(EXAMPLE).researcher_contact  # the example has it
    path = tmp_path / "study.toml"
    path.write_text(
        source.replace('researcher_contact = "chat-study@example.org"', ""), encoding="utf-8"
    )
    db = f"sqlite:///{tmp_path / 'study.db'}"
    args = ["collect", "init", "--study", str(path), "--db", db, "--no-check-models"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "researcher_contact: required" in lines[0], result.output
    assert str(path) in lines[0]
    assert not (tmp_path / "study.db").exists()  # nothing made
