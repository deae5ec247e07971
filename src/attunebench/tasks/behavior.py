"""`behavior`: say what an assistant reply did, against the participant's labels of it.

Construct: the support-strategy and reply-behavior labelling of ESConv (the supporter's own
strategy tags) extended with the behaviors people complain about in assistants (lecturing,
dismissing, deflecting, over-apologising). The model sees the conversation up to the user's
message at turn t, then one reply to it, and lists every behavior label the reply shows.

Items: every reply that carries behavior labels (several replies of one turn are several
items). Per item: `score` is the F1 of the predicted and gold label sets (two empty sets
count as agreement, 1.0); an invalid answer scores 0.0. Corpus metrics (micro- and macro-F1,
per-label F1) are in `tasks.metrics`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from attunebench.data.schema import Conversation
from attunebench.data.taxonomy import taxonomy_of
from attunebench.judge.templates import delimit
from attunebench.models.hints import HintKind, TaskHint
from attunebench.records import ItemRecord, PromptInfo
from attunebench.tasks import history as h
from attunebench.tasks.base import TASKS, Caller, Item
from attunebench.tasks.common import JSON_PARAMS, record
from attunebench.tasks.parsing import InvalidAnswer, parse_behaviors
from attunebench.tasks.prompting import label_menu, self_reports_block, task_prompt, transcript
from attunebench.tasks.scoring import f1

TASK = "behavior"
PROMPT = task_prompt("behavior")


@dataclass(frozen=True, slots=True)
class BehaviorTask:
    context: str = h.DEFAULT_CONTEXT
    name: str = field(default=TASK, init=False)
    subject_hints: ClassVar[frozenset[HintKind]] = frozenset({"behavior"})

    @property
    def prompts(self) -> list[PromptInfo]:
        return [PROMPT.info]

    @property
    def options(self) -> dict[str, Any]:
        return {"context": self.context}

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item]:
        modes = h.context_modes(self.context)
        for conversation in conversations:
            taxonomy = taxonomy_of(conversation)
            for turn in conversation.turns:
                for response in turn.responses:
                    if not response.behaviors:
                        continue
                    for mode in modes:
                        yield Item(TASK, conversation, turn.index, response.id, taxonomy, mode)

    async def evaluate(
        self, item: Item, model: str, caller: Caller, judges: list[str]
    ) -> ItemRecord:
        conversation, taxonomy = item.conversation, item.taxonomy
        turn = h.turn_at(conversation, item.turn_index)
        reply = turn.response(item.item_id)
        if reply is None:
            raise ValueError(f"{item.key}: turn {turn.index} has no reply {item.item_id!r}")
        mode: h.ContextMode = "informed" if item.variant == "informed" else "blind"
        said = h.history_through(conversation, turn.index)
        messages = PROMPT.render(
            conversation=transcript(said),
            self_reports=self_reports_block(mode, h.self_reports_before(conversation, turn.index)),
            reply=delimit("reply", reply.text),
            labels=label_menu(taxonomy.behaviors),
        )
        hint = TaskHint(
            kind="behavior",
            text=reply.text,
            labels=tuple(label.name for label in taxonomy.behaviors),
            history=h.hint_history(said),
            item_key=item.key,
        )
        result = await caller.call(
            model, messages, prompt=PROMPT.info, item=item, params=JSON_PARAMS, hint=hint
        )
        gold = {"behaviors": list(reply.behaviors)}
        if result.text is None:
            return record(item, model, "failed", [result], gold=gold, error=result.error)
        try:
            predicted = parse_behaviors(result.text, taxonomy.behaviors)
        except InvalidAnswer as invalid:
            return record(
                item, model, "invalid", [result], gold=gold, score=0.0,
                raw_output=result.text, error=str(invalid),
            )  # fmt: skip
        return record(
            item, model, "ok", [result], prediction={"behaviors": list(predicted)}, gold=gold,
            score=f1(predicted, reply.behaviors), raw_output=result.text,
        )  # fmt: skip


@TASKS.register(TASK)
def behavior_task(context: str = h.DEFAULT_CONTEXT) -> BehaviorTask:
    """Reply-behavior labelling; `context` is blind (default), informed, or both."""
    h.context_modes(context)
    return BehaviorTask(context=context)
