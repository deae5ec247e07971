"""Moving prompt wording from Python into the tasks' TOML files changed no prompt: the first
items of rating, outcome, emotion, behavior and preference (both context modes, generate and
choice form) render word for word as they did before the move. The golden file was written
by the code that held the wording in Python; rerun this module as a script to rewrite it
after a deliberate change."""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from pathlib import Path

import pytest
from task_harness import (
    assert_renders_as_golden,
    conversation,
    item_prompts,
    make_task,
    rated_turn,
    sample_conversations,
    write_golden,
)

from attunebench.data.jsonl import canonical_json
from attunebench.data.schema import Conversation, Outcome, RatingScale, State, Turn
from attunebench.prompts import PromptError, parse_prompt

GOLDEN = Path(__file__).parent / "golden" / "rendered_prompts.json"
# Each task's first items (rating's and outcome's built ones among them); behavior asks one
# choice question per label, so two of its items already hold 28 prompts.
ITEMS = {"rating": 8, "outcome": 8, "emotion": 4, "behavior": 2, "preference": 4}


def built() -> list[Conversation]:
    """Hand-built conversations with what the sample lacks: ratings on a 1-10 scale and on
    digits, and an outcome survey with a field of its own (asked in the generic wording)."""
    turns = [rated_turn(0, None, user="I feel lost at work.")]
    turns += [Turn(index=1, user="It got worse.", state=State(intensity=4), feedback=7)]
    turns += [rated_turn(2, None, user="Thanks."), rated_turn(3, None)]
    turns[3] = turns[3].model_copy(update={"feedback": 3})
    ten = {"rating": RatingScale(low=1, high=10)}  # the outcome's rating scale, declared
    outcome = Outcome(
        final_state=State(intensity=2), rating=8, survey={"calm": 3, "trust": 6}, scales=ten
    )
    return [
        conversation(turns, cid="built", outcome=outcome, rating_scale=RatingScale(low=1, high=10)),
        conversation(turns, cid="digits", rating_scale=RatingScale(low=1, high=5)),
    ]


def rendered_prompts() -> dict[str, list[str]]:
    """Each item's prompts (the first four of each task's on the sample, and all on the built
    conversations), keyed by task, item and query."""
    found: dict[str, list[str]] = {}
    conversations = sample_conversations()[:2] + built()
    for name, count in ITEMS.items():
        # The sample's rated replies became rating items after the golden file was written
        # (their prompts are checked in test_outcome_rating); its items are the built ones'.
        given = built() if name == "rating" else conversations
        found |= item_prompts(name, make_task(name, context="both"), given, count)
    return found


def test_every_prompt_renders_as_before() -> None:
    assert_renders_as_golden(GOLDEN, rendered_prompts())


def test_the_golden_file_holds_the_moved_wording() -> None:
    """A trap for a golden file written after the move went wrong: it must hold the wording
    that lived in Python (the rating scale's ends, outcome's questions)."""
    text = GOLDEN.read_text(encoding="utf-8")
    assert "from 1 (very poor) to 5 (very good)?" in text
    assert "How intense was the user's feeling after the conversation, from 1" in text


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    write_golden(GOLDEN, rendered_prompts())


PROMPT_FILE = """
id = "p"
version = "1"
description = "d"
system = "Rate it."
user = "$conversation"

[texts]
question = "From $low to $high?"
"""


def test_a_prompts_texts_are_in_its_digest() -> None:
    template = parse_prompt(PROMPT_FILE, "p.toml")
    assert template.text("question", low="1", high="5", unused="x") == "From 1 to 5?"
    edited = parse_prompt(PROMPT_FILE.replace("From", "Between"), "p.toml")
    assert edited.digest != template.digest  # an edited question shows in run.json
    with pytest.raises(PromptError, match="no text 'other'"):
        template.text("other")
    with pytest.raises(PromptError, match="needs field 'high'"):
        template.text("question", low="1")


def test_a_prompt_without_texts_keeps_its_digest() -> None:
    """The trap: adding texts must not change the digest (and cache key) of every other prompt."""
    plain = parse_prompt(PROMPT_FILE.split("[texts]")[0], "p.toml")
    payload = canonical_json(["p", "1", "Rate it.", "$conversation"])
    assert plain.digest == hashlib.sha256(payload.encode()).hexdigest()[:8]


def test_every_task_prompts_digest_covers_the_shared_wording() -> None:
    """An edit to tasks/helpers/wording.toml changes every task's recorded prompt version: each
    prompt a registered task records is its file's template sharing the wording's digest."""
    from attunebench.tasks import load_tasks
    from attunebench.tasks.helpers.wording import WORDING

    tasks = load_tasks()
    recorded = {t for name in tasks for t in tasks.get(name)().templates}
    assert len(recorded) >= 12
    for shared in recorded:
        template = dataclasses.replace(shared, shared="")  # as its prompt file holds it
        assert shared.info == template.sharing(WORDING).info, shared.id
        assert shared.info != template.info  # the trap: a digest that does not see the wording
    edited = parse_prompt(
        PROMPT_FILE.replace('question = "From $low to $high?"', 'answer_opening = "Reply: ("'),
        "w.toml",
    )
    assert template.sharing(edited).digest != template.sharing(WORDING).digest
