"""Moving the judges' and the shared prompt wording (who gave the labels, what the participant
told us, the choice question's tail) from Python into TOML changed no prompt: the first items of
response (the reply and its judges' queries, with comments shown), judge_audit and judge_thumbs,
in both context modes, render word for word as they did before the move. The golden file was
written by the code that held the wording in Python; rerun this module as a script to rewrite it
after a deliberate change."""

from __future__ import annotations

import sys
from itertools import islice
from pathlib import Path

from task_harness import (
    all_prompts,
    assert_renders_as_golden,
    item_prompts,
    make_task,
    sample_conversations,
    write_golden,
)

from attunebench.data.schema import Conversation
from testkit.conversations import as_bot_chat

GOLDEN = Path(__file__).parent / "golden" / "rendered_judge_prompts.json"
ITEMS = 3
REPLY = "That sounds hard. What happened at work today?"


def conversations() -> list[Conversation]:
    sample = sample_conversations()[:2]
    return sample + [as_bot_chat(c) for c in sample]


def rendered_prompts() -> dict[str, list[str]]:
    """Each item's prompts, keyed by task, item and query."""
    from attunebench.tasks.response import ResponsePrediction

    found: dict[str, list[str]] = {}
    for name in ("judge_audit", "judge_thumbs"):
        task = make_task(name, participant_context="both")
        found |= item_prompts(name, task, conversations(), ITEMS)
    response = make_task("response", context="both", participant_comment=True)
    for number, item in enumerate(islice(response.items(conversations()), ITEMS)):
        for query in response.queries(item, "generate"):
            found[f"response/{number}/{item.variant}/{query.key}"] = all_prompts(query)
        judged = response.judge_queries(item, ResponsePrediction(reply=REPLY), ["judge/x"])
        for query in judged:
            found[f"response/{number}/{item.variant}/{query.key}"] = all_prompts(query)
    return found


def test_every_judge_prompt_renders_as_before() -> None:
    assert_renders_as_golden(GOLDEN, rendered_prompts())


def test_the_golden_file_holds_the_moved_wording() -> None:
    """A trap for a golden file written after the move went wrong: it must hold wording that
    lived in Python (the participant block's lines, who gave the labels, the choice tail)."""
    text = GOLDEN.read_text(encoding="utf-8")
    assert "What this person told us about this moment, quoted between <participant> tags:" in text
    assert "before seeing any reply, what would help most, in their words:" in text
    assert "Answer with the letter in parentheses.\\nAnswer: (" in text


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    write_golden(GOLDEN, rendered_prompts())
