"""Task test fixtures: the sample, and the shared corpora imported once per session; the
helpers themselves are in task_harness.py."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from attunebench.data.importers import ESConvImporter, USSImporter
from attunebench.data.schema import Conversation

sys.path.insert(0, str(Path(__file__).parent))
from task_harness import sample_conversations

# Every ESConv import (variant, split) and both USS parts.
ESCONV_SPLITS = [
    ("hf", "train"),
    ("hf", "valid"),
    ("hf", "test"),
    ("failed", "all"),
    ("multiesc", "valid"),
    ("multiesc", "test"),
]
USS_PARTS = ["mwoz", "redial"]


@pytest.fixture(scope="session")
def sample() -> list[Conversation]:
    return sample_conversations()


@pytest.fixture(scope="session")
def esconv(data_dir: Path) -> dict[tuple[str, str], list[Conversation]]:
    """Each ESConv import by (variant, split), read as `data import esconv` reads it."""
    return {
        (variant, split): list(
            ESConvImporter(variant=variant, split=split).read(data_dir / "esconv", Counter())
        )
        for variant, split in ESCONV_SPLITS
    }


@pytest.fixture(scope="session")
def uss(data_dir: Path) -> dict[str, list[Conversation]]:
    return {
        part: list(USSImporter(part=part).read(data_dir / "uss", Counter())) for part in USS_PARTS
    }
