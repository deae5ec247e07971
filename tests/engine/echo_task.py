"""A minimal task for testing the engine: one call per user turn, plus one per judge.

It is not part of the package: the real tasks live in attunebench.tasks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from attunebench.data.schema import Conversation
from attunebench.data.taxonomy import taxonomy_of
from attunebench.models.base import Message
from attunebench.models.hints import TaskHint
from attunebench.records import ItemRecord, PromptInfo
from attunebench.tasks.base import Caller, Item

PROMPT = PromptInfo(id="echo", version="1")
JUDGE_PROMPT = PromptInfo(id="echo-judge", version="1")


@dataclass(frozen=True)
class EchoTask:
    name: str = "echo"
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def prompts(self) -> list[PromptInfo]:
        return [PROMPT, JUDGE_PROMPT]

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item]:
        for conversation in conversations:
            for turn in conversation.turns:
                yield Item(self.name, conversation, turn.index, "reply", taxonomy_of(conversation))

    async def evaluate(
        self, item: Item, model: str, caller: Caller, judges: list[str]
    ) -> ItemRecord:
        turn = next(t for t in item.conversation.turns if t.index == item.turn_index)
        messages = [Message("user", turn.user)]
        hint = TaskHint("response", text=turn.user)
        result = await caller.call(model, messages, prompt=PROMPT, item=item, hint=hint)
        base: dict[str, Any] = {
            "task": item.task, "model": model, "conversation_id": item.conversation.id,
            "turn_index": item.turn_index, "item_id": item.item_id, "variant": item.variant,
        }
        if result.text is None:
            # Deliberately claims a score: the engine must still never score a failure.
            return ItemRecord(status="failed", error=result.error, score=1.0, **base)
        verdicts = []
        for judge in judges:
            judged = await caller.call(
                judge, [Message("user", f"Rate: {result.text}")], prompt=JUDGE_PROMPT,
                item=item, role="judge", hint=TaskHint("judge_rubric", text=result.text),
            )
            verdicts.append(judged.text)
        return ItemRecord(
            status="ok", prediction=result.text, raw_output=result.text,
            score=float(len(result.text) > 0), meta={"verdicts": verdicts}, **base,
        )
