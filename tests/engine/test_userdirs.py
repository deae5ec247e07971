"""The one place that says where per-machine files live: the shared response cache, the local
models' files and tiktoken's encoding all follow the same rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from attunebench.engine.wiring import default_cache_path
from attunebench.inspect.offline import cache_folder
from attunebench.models.local_models import model_dir


def test_an_override_variable_wins_over_the_user_cache_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ATTUNEBENCH_CACHE", str(tmp_path / "mine.sqlite"))
    monkeypatch.setenv("ATTUNEBENCH_MODEL_DIR", str(tmp_path / "weights"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tk"))
    assert default_cache_path() == tmp_path / "mine.sqlite"
    assert model_dir() == tmp_path / "weights"
    assert cache_folder() == tmp_path / "tk"


def test_without_overrides_everything_is_under_one_attunebench_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # (monkeypatch also undoes cache_folder() setting TIKTOKEN_CACHE_DIR for tiktoken)
    for name in ("ATTUNEBENCH_CACHE", "ATTUNEBENCH_MODEL_DIR", "TIKTOKEN_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    base = tmp_path / "xdg" / "attunebench"
    assert default_cache_path() == base / "cache.sqlite"
    assert model_dir() == base / "models"
    assert cache_folder() == base / "tiktoken"
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # empty counts as unset, as the spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert model_dir() == tmp_path / "home" / ".cache" / "attunebench" / "models"
