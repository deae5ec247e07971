"""Task test fixtures; the helpers themselves are in task_harness.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from attunebench.data.schema import Conversation

sys.path.insert(0, str(Path(__file__).parent))
from task_harness import sample_conversations


@pytest.fixture(scope="session")
def sample() -> list[Conversation]:
    return sample_conversations()
