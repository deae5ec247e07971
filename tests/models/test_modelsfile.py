"""The TOML models file: entries, provider options, cache identity, and errors that name fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from attunebench.models import SpecError
from attunebench.models.modelsfile import (
    ModelEntry,
    ModelsFileError,
    load_models_file,
    resolve_model,
    short_names,
)

MODELS = """
[models.gemma]
spec = "openai/gemma-3-270m"
base_urls = ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"]
api_key_env = "LOCAL_KEY"
identity = "gemma-3-270m-q4_k_m"
concurrency = 4
rate_limit = 2.5
price = { input = 0.5, output = 2.0 }
params = { temperature = 0.3, max_tokens = 64, json_mode = true }
options = { json_mode = false, timeout_s = 30 }

[models.scripted]
spec = "mock/default"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_entries_carry_everything_the_engine_needs(tmp_path: Path) -> None:
    entries = load_models_file(write(tmp_path, MODELS))
    gemma = entries["gemma"]
    assert gemma.name == "gemma" and gemma.spec == "openai/gemma-3-270m"
    assert gemma.params.temperature == 0.3 and gemma.params.json_mode
    assert gemma.provider_options() == {
        "json_mode": False,
        "timeout_s": 30,
        "base_urls": ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"],
        "api_key_env": "LOCAL_KEY",
    }
    assert gemma.endpoint_concurrency(default=16) == 8  # 4 per replica, two replicas
    assert gemma.price.cost(1_000_000, 500_000) == pytest.approx(1.5)
    assert entries["scripted"].provider_options() == {}
    assert entries["scripted"].endpoint_concurrency(default=16) == 16


def test_cache_identity_ignores_transport(tmp_path: Path) -> None:
    gemma = load_models_file(write(tmp_path, MODELS))["gemma"]
    moved = gemma.model_copy(
        update={
            "base_urls": ("http://elsewhere:1/v1",),
            "concurrency": 99,
            "options": {"json_mode": False, "timeout_s": 5},
        }
    )
    assert moved.cache_identity() == gemma.cache_identity()
    changed = gemma.model_copy(update={"options": {"json_mode": True}})
    assert changed.cache_identity() != gemma.cache_identity()


def test_resolve_names_and_plain_specs(tmp_path: Path) -> None:
    entries = load_models_file(write(tmp_path, MODELS))
    assert resolve_model("gemma", entries) is entries["gemma"]
    plain = resolve_model("anthropic/claude-x", entries)
    assert plain == ModelEntry.from_spec("anthropic/claude-x") and plain.name == plain.spec
    with pytest.raises(SpecError, match="neither a models-file name"):
        resolve_model("gpt-4o", entries)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[models.a]\nspec = "nospec"\n', r"models\.a\.spec: .*provider/model"),
        ('[models.a]\nspec = "mock/x"\nconcurrency = 0\n', r"models\.a\.concurrency: "),
        ('[models.a]\nspec = "mock/x"\nparams = { temprature = 1 }\n', r"a\.params\.temprature"),
        ('[models.a]\nspec = "mock/x"\nprices = 1\n', r"models\.a\.prices: Extra inputs"),
        ("[models.a\n", r"line 1"),
        ("[other]\nx = 1\n", r"other: Extra inputs"),
    ],
)
def test_errors_name_the_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ModelsFileError, match=message) as raised:
        load_models_file(path)
    assert str(path) in str(raised.value)


def test_missing_file_is_clear(tmp_path: Path) -> None:
    with pytest.raises(ModelsFileError, match="no such models file"):
        load_models_file(tmp_path / "absent.toml")


def test_fitted_baselines_carry_short_names_told_apart_by_their_train_files() -> None:
    specs = [
        "baseline/random",
        "baseline/majority?train=runs/suite/open-v1-mini-train.jsonl",
        "baseline/knn?train=a/valid.jsonl",
        "baseline/knn?train=b/train.jsonl&k=3",
        "mock/default?x=1",
    ]
    named = short_names([ModelEntry.from_spec(spec) for spec in specs])
    assert [entry.name for entry in named] == [
        "baseline/random",
        "baseline/majority",
        "baseline/knn-valid",
        "baseline/knn-train",
        "mock/default?x=1",  # not a baseline: named as given
    ]
    assert [entry.spec for entry in named] == specs  # run.json and the report keep the spec
    # the trap: two whose train files share a stem keep their specs, never one name for both
    twins = ["baseline/knn?train=a/train.jsonl", "baseline/knn?train=b/train.jsonl"]
    assert [e.name for e in short_names([ModelEntry.from_spec(s) for s in twins])] == twins
    # a models-file entry's name is its own
    mine = ModelEntry(name="my-knn", spec="baseline/knn?train=a/valid.jsonl")
    plain = ModelEntry.from_spec("baseline/knn?train=b/valid.jsonl")
    assert [e.name for e in short_names([mine, plain])] == ["my-knn", "baseline/knn"]
