"""Consecutive prompts of a conversation share their instructions and history as a prefix.

The engine sends a conversation's items task by task and turn by turn so that a server's
prefix cache can serve the prompt of turn t+1 from the prompt of turn t; that only pays if the
prompts put what the items share first. Prompts are compared as the project serialises them
(every message in order, as `task_harness.rendered` writes them).
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict

import pytest
from task_harness import Call, Harness, make_task, mock_answer, rendered

from attunebench.data.schema import Conversation
from attunebench.tasks.helpers.history import ContextMode, history_through, self_reports_before
from attunebench.tasks.helpers.prompting import chat_messages, self_reports_block, transcript
from attunebench.tasks.helpers.wording import task_prompt

# (task, the prompt its calls are checked on): the subject prompts, and the audit's judge.
CHECKED = [
    ("emotion", "emotion"),
    ("behavior", "behavior"),
    ("preference", "preference"),
    ("response", "response"),
    ("judge_audit", "judge-pairwise"),
]
QUOTED = re.compile(r"<(\w+)>\n.*?\n</\1>", re.DOTALL)
PANAS = re.compile(r"Also rate how much they felt each of these.*?: [^.]*\.", re.DOTALL)


def common_prefix(a: str, b: str) -> int:
    pairs = enumerate(zip(a, b, strict=False))
    return next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))


async def calls_in_engine_order(name: str, conversation: Conversation) -> list[Call]:
    """Every call of the task on one conversation, items in turn order as the engine runs them."""
    options = {} if name == "judge_audit" else {"context": "both"}
    task = make_task(name, **options)
    harness = Harness.scripted(s=mock_answer, j=mock_answer)
    for item in sorted(task.items([conversation]), key=lambda i: i.turn_index):
        await harness.evaluate(task, item, "s", ["j"])
    return harness.calls


def history_end(call: Call, *, whole: bool) -> int:
    """Where, in the rendered prompt, the conversation up to the call's turn ends.

    `whole` False stops before what the next turn's prompt cannot repeat (the transcript's
    closing tag; in a chat, nothing after the user's message). The system message must come
    before it: the fixed instructions are part of what is shared.
    """
    text = rendered(call.messages)
    said = history_through(call.item.conversation, call.item.turn_index)
    if call.query.prompt.id == "response":
        system = task_prompt("attunebench.tasks.response").render()[0].content
        history = rendered(chat_messages(system, said))
        assert text.startswith(history)
        end = len(history)
    else:
        quoted = transcript(said)
        history = quoted if whole else quoted.removesuffix("\n</conversation>")
        end = text.index(history) + len(history)
    assert end > len(rendered(call.messages[:1])), "the history comes after the system message"
    return end


def fixed_text_after_history(call: Call) -> str:
    """What the prompt says after the history, less the item's quoted parts and self-reports."""
    text = rendered(call.messages)[history_end(call, whole=True) :]
    mode: ContextMode = "informed" if call.item.variant == "informed" else "blind"
    reports = self_reports_before(call.item.conversation, call.item.turn_index)
    block = self_reports_block(mode, reports, call.item.conversation).strip()
    tail = QUOTED.sub("", text.replace(block, ""))
    # the PANAS items asked at a turn are the item's own, so their answer form comes last
    return PANAS.sub("", tail) if getattr(call.item.gold, "panas", None) else tail


@pytest.mark.parametrize(("name", "prompt_id"), CHECKED)
async def test_the_next_prompt_begins_with_the_instructions_and_the_history_so_far(
    sample: list[Conversation], name: str, prompt_id: str
) -> None:
    across_turns = 0
    for conversation in sample:
        by_variant: dict[str, list[Call]] = defaultdict(list)
        for call in await calls_in_engine_order(name, conversation):
            if call.query.prompt.id == prompt_id:
                by_variant[call.item.variant].append(call)
        for calls in by_variant.values():
            for before, after in itertools.pairwise(calls):
                shared = common_prefix(rendered(before.messages), rendered(after.messages))
                later = after.item.turn_index > before.item.turn_index
                assert shared >= history_end(before, whole=not later), (after.item.key, name)
                across_turns += later
            for call in calls:  # the answer form and the label menu were given before it all
                tail = fixed_text_after_history(call)
                assert '{"' not in tail and "\n- " not in tail and len(tail) < 400, tail
    assert across_turns >= 5  # the sample has conversations with several items per task


async def test_the_label_menu_is_part_of_the_shared_system_message(
    sample: list[Conversation],
) -> None:
    for name in ("emotion", "behavior"):
        calls = await calls_in_engine_order(name, sample[0])
        taxonomy = calls[0].item.taxonomy
        labels = taxonomy.emotions if name == "emotion" else taxonomy.behaviors
        assert len(calls) > 1
        assert {c.messages[0].content for c in calls} == {calls[0].messages[0].content}
        assert all(f"- {label.name}: " in calls[0].messages[0].content for label in labels)
