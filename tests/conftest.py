"""Shared fixtures: where the third-party corpora live, and whether their absence is fatal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    return Path(os.environ.get("ATTUNEBENCH_DATA_DIR", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared corpora folder; skips when absent, fails if ATTUNEBENCH_REQUIRE_SHARED_DATA=1."""
    path = shared_data_dir()
    if not path.is_dir():
        message = f"shared corpora not found at {path} (set ATTUNEBENCH_DATA_DIR)"
        if os.environ.get("ATTUNEBENCH_REQUIRE_SHARED_DATA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path
