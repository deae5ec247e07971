"""`response`: the model writes its own reply; judges score it for this participant.

Construct: LLM-as-a-judge response quality (MT-Bench / Arena-Hard style), made personal: the
judge is told what this participant said they felt and wanted (their self-reported state,
their words, the behaviors they wanted, and for reference the reply they chose and the one
they rejected) and judges for them, not for an average reader.

Items: turns with a recorded pick and at least one other reply (the rejected one: the lowest
rated, or the first in the data). The model sees the conversation as chat messages, as it
happened, ending with the user's message; informed mode adds the earlier self-reports after
that message (the system message stays the same, so the conversation is a shared prefix).

Judging (`judge_mode`): `pairwise` compares the reply with the chosen reply and with the
rejected one, each in both orders (win 1, tie 0.5, loss 0, averaged over the orders with a
parsed verdict); `rubric` asks for an absolute 1-10 score; `both` (default) does both.
Per judge the scores are `win_vs_chosen[JUDGE]`, `win_vs_rejected[JUDGE]`, `rubric[JUDGE]`;
the ensemble scores without a suffix are their means over judges. `score`, the headline, is
the mean of win_vs_chosen and win_vs_rejected, or with `judge_mode="rubric"`, (rubric-1)/9.

Statuses: no reply (failed call) -> failed; an empty reply -> invalid, score 0.0, not judged.
Unparseable verdicts are excluded from the means and counted in `meta`. When no verdict is
usable the model is not at fault: `ok` with score None and `meta.judge_unusable` true. A judge
call that failed for good (retries exhausted) makes the record `failed`, unscored, whatever the
other verdicts said; a resumed run retries it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from attunebench.data.schema import Conversation
from attunebench.data.taxonomy import taxonomy_of
from attunebench.judge.catalog import pairwise_prompt, rubric_prompt
from attunebench.models.hints import HintKind, TaskHint
from attunebench.records import ItemRecord, PromptInfo, Status
from attunebench.tasks import history as h
from attunebench.tasks.base import TASKS, Caller, Item, PlanError
from attunebench.tasks.common import REPLY_PARAMS, check_choice, record, usage
from attunebench.tasks.judging import JudgeCall, JudgeContext, judge_pair, judge_reply, profile_of
from attunebench.tasks.pairs import reference_replies
from attunebench.tasks.parsing import InvalidAnswer, PairwiseVerdict, RubricVerdict, parse_reply
from attunebench.tasks.prompting import chat_messages, self_reports_block, task_prompt
from attunebench.tasks.scoring import outcome

TASK = "response"
PROMPT = task_prompt("response")
JUDGE_MODES = ("both", "pairwise", "rubric")
COMPARISONS = ("vs_chosen", "vs_rejected")
MODEL_FIRST, REFERENCE_FIRST = "model-first", "reference-first"


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def judge_scores(
    calls: Sequence[JudgeCall], judges: Sequence[str], mode: str
) -> dict[str, float | None]:
    """Per-judge and ensemble scores from the usable verdicts."""
    metrics = [f"win_{c}" for c in COMPARISONS] if mode != "rubric" else []
    metrics += ["rubric"] if mode != "pairwise" else []
    scores: dict[str, float | None] = {}
    for judge in judges:
        mine = [c for c in calls if c.judge == judge]
        for comparison in COMPARISONS if mode != "rubric" else ():
            scores[f"win_{comparison}[{judge}]"] = _mean([
                outcome(c.parsed.winner, "A" if c.label.endswith(MODEL_FIRST) else "B")
                for c in mine
                if c.label.startswith(comparison) and isinstance(c.parsed, PairwiseVerdict)
            ])  # fmt: skip
        if mode != "pairwise":
            scores[f"rubric[{judge}]"] = _mean(
                [c.parsed.score for c in mine if isinstance(c.parsed, RubricVerdict)]
            )
    for metric in metrics:
        scores[metric] = _mean([scores[f"{metric}[{judge}]"] for judge in judges])
    return scores


def headline(scores: dict[str, float | None], mode: str) -> float | None:
    if mode == "rubric":
        rubric = scores.get("rubric")
        return None if rubric is None else (rubric - 1.0) / 9.0
    return _mean([scores.get(f"win_{c}") for c in COMPARISONS])


@dataclass(frozen=True, slots=True)
class ResponseTask:
    context: str = h.DEFAULT_CONTEXT
    judge_mode: str = "both"
    name: str = field(default=TASK, init=False)
    subject_hints: ClassVar[frozenset[HintKind]] = frozenset({"response"})
    needs_judge: bool = field(default=True, init=False)

    @property
    def judge_hints(self) -> frozenset[HintKind]:
        kinds: set[HintKind] = set()
        if self.judge_mode != "rubric":
            kinds.add("judge_pairwise")
        if self.judge_mode != "pairwise":
            kinds.add("judge_rubric")
        return frozenset(kinds)

    @property
    def prompts(self) -> list[PromptInfo]:
        judged = [pairwise_prompt()] if self.judge_mode != "rubric" else []
        judged += [rubric_prompt()] if self.judge_mode != "pairwise" else []
        return [PROMPT.info, *(t.info for t in judged)]

    @property
    def options(self) -> dict[str, Any]:
        return {"context": self.context, "judge_mode": self.judge_mode}

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item]:
        modes = h.context_modes(self.context)
        for conversation in conversations:
            taxonomy = taxonomy_of(conversation)
            for turn in conversation.turns:
                if reference_replies(turn) is not None:
                    for mode in modes:
                        yield Item(TASK, conversation, turn.index, "reply", taxonomy, mode)

    def judge_calls(
        self, caller: Caller, judges: Sequence[str], context: JudgeContext, reply: str,
        references: dict[str, str],
    ) -> list[Awaitable[JudgeCall]]:  # fmt: skip
        calls: list[Awaitable[JudgeCall]] = []
        for judge in judges:
            if self.judge_mode != "rubric":
                for comparison in COMPARISONS:
                    other = references[comparison]
                    calls.append(judge_pair(caller, judge, context, reply, other,
                                            f"{comparison}/{MODEL_FIRST}"))
                    calls.append(judge_pair(caller, judge, context, other, reply,
                                            f"{comparison}/{REFERENCE_FIRST}"))
            if self.judge_mode != "pairwise":
                calls.append(judge_reply(caller, judge, context, reply))
        return calls

    async def evaluate(
        self, item: Item, model: str, caller: Caller, judges: list[str]
    ) -> ItemRecord:
        if not judges:
            raise PlanError("the response task needs at least one judge (--judge SPEC)")
        conversation = item.conversation
        turn = h.turn_at(conversation, item.turn_index)
        references = reference_replies(turn)
        if references is None:
            raise ValueError(f"{item.key}: the turn has no chosen and rejected reply")
        chosen, rejected = references
        mode: h.ContextMode = "informed" if item.variant == "informed" else "blind"
        reports = self_reports_block(mode, h.self_reports_before(conversation, turn.index))
        system = PROMPT.render()[0].content
        messages = chat_messages(system, h.history_through(conversation, turn.index), note=reports)
        hint = TaskHint(
            kind="response", text=turn.user, item_key=item.key,
            history=h.hint_history(h.history_before(conversation, turn.index)),
        )  # fmt: skip
        result = await caller.call(
            model, messages, prompt=PROMPT.info, item=item, params=REPLY_PARAMS, hint=hint
        )
        gold = {"chosen": chosen.id, "rejected": rejected.id}
        meta: dict[str, Any] = {
            "judges": list(judges),  # their specs and kinds (proxy, mock, ...) are in run.json
            "judge_mode": self.judge_mode,
        }
        common: dict[str, Any] = {"gold": gold, "raw_output": result.text}
        if result.text is None:
            return record(item, model, "failed", [result], error=result.error, meta=meta, **common)
        try:
            reply = parse_reply(result.text)
        except InvalidAnswer as invalid:
            return record(item, model, "invalid", [result], score=0.0, error=str(invalid),
                          meta=meta, **common)  # fmt: skip
        context = JudgeContext.at(item, turn.index, profile_of(turn, references))
        texts = {"vs_chosen": chosen.text, "vs_rejected": rejected.text}
        calls: list[JudgeCall] = list(
            await asyncio.gather(*self.judge_calls(caller, judges, context, reply, texts))
        )
        scores = judge_scores(calls, judges, self.judge_mode)
        score = headline(scores, self.judge_mode)
        failed = [c for c in calls if c.verdict.status == "failed"]
        meta.update(
            verdicts_invalid=sum(c.verdict.status == "invalid" for c in calls),
            verdicts_failed=len(failed),
            judge_usage=usage([c.result for c in calls]),
            judge_unusable=score is None,
        )
        if failed:
            meta["judge_errors"] = [f"{c.judge} {c.label}: {c.result.error}" for c in failed]
        # A judge call that failed for good leaves the item unscored rather than scored on the
        # verdicts that happened to arrive: the score must not depend on which call failed, and
        # a `failed` record is retried on resume.
        status: Status = "failed" if failed else "ok"
        return record(
            item, model, status, [result], prediction={"reply": reply},
            score=None if failed else score,
            scores=scores, verdicts=[c.verdict for c in calls], meta=meta,
            error="; ".join(meta["judge_errors"]) if status == "failed" else None, **common,
        )  # fmt: skip


@TASKS.register(TASK)
def response_task(context: str = h.DEFAULT_CONTEXT, judge_mode: str = "both") -> ResponseTask:
    """Reply generation judged for the participant; needs at least one `--judge`."""
    h.context_modes(context)
    check_choice("judge_mode", judge_mode, JUDGE_MODES)
    return ResponseTask(context=context, judge_mode=judge_mode)
