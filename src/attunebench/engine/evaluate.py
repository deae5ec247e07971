"""One (item, model) evaluation, the same for every task: ask, decide the outcome, record.

A call that failed after the engine's retries makes the record `failed` (unscored, retried on
resume); an answer that cannot be read, `invalid` (scored as the task's worst value, the raw
output kept); otherwise a judged task asks its judges, and the task scores: `ok`. A judge call
that failed for good is an unusable verdict, a loss for the model judged (see `evaluate`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from attunebench.frozen import Frozen
from attunebench.records import JUDGE_FAILED, Distribution, ItemRecord, Status, Verdict
from attunebench.tasks import base
from attunebench.tasks.helpers.judging import read_verdict


class Asker(Protocol):
    """What an evaluation asks its questions through: the engine (`ItemCaller`), or another
    harness's models (`attunebench.inspect`)."""

    async def ask(
        self, model: str, query: base.Query, item: base.Item[Any], role: base.CallRole
    ) -> base.Output: ...


def _about(query: base.Query, model: str) -> base.Query:
    """A judge's query about `model`'s answer, with the hint naming that model."""
    if query.model is None or query.hint is None:
        return query
    return dataclasses.replace(query, hint=dataclasses.replace(query.hint, subject=model))


async def ask_all(
    caller: Asker, item: base.Item[Any], queries: Sequence[base.Query], model: str
) -> dict[str, base.Output]:
    # Every call is awaited before an error is raised (the run's dollar cap stopping one):
    # none is left running, and each that came back reaches the cache.
    answers = await asyncio.gather(
        *(caller.ask(q.model or model, _about(q, model), item, q.role) for q in queries),
        return_exceptions=True,
    )
    outputs: list[base.Output] = []
    for answer in answers:
        if isinstance(answer, BaseException):
            raise answer
        outputs.append(answer)
    return dict(zip((q.key for q in queries), outputs, strict=True))


def raw_text(outputs: Mapping[str, base.Output]) -> str | None:
    """The outputs as a person reads them: one text, or each under its query's key."""
    if not outputs:
        return None
    if len(outputs) == 1:
        return next(iter(outputs.values())).shown
    return "\n".join(f"--- {key} ---\n{output.shown}" for key, output in outputs.items())


def failure(outputs: Mapping[str, base.Output]) -> tuple[str, bool] | None:
    """The failed calls' errors, and whether every one is permanent; None if none failed."""
    failed = {key: output for key, output in outputs.items() if not output.ok}
    if not failed:
        return None
    message = "; ".join(f"{key}: {output.error or 'no output'}" for key, output in failed.items())
    return message, all(output.permanent for output in failed.values())


def record(
    item: base.Item[Any],
    model: str,
    mode: base.AnswerMode,
    status: Status,
    outputs: Mapping[str, base.Output],
    *,
    prediction: Frozen | None = None,
    scored: base.Scored | None = None,
    error: str | None = None,
    permanent: bool = False,
    verdicts: Sequence[Verdict] = (),
) -> ItemRecord:
    distributions = {
        key: Distribution(probabilities=dict(o.probabilities), floored=o.floored)
        for key, o in outputs.items()
        if o.probabilities is not None
    }
    return base.item_record(
        item,
        model,
        status,
        prediction=prediction,
        scored=scored,
        mode=mode,
        raw_output=raw_text(outputs),
        distributions=distributions,
        error=error,
        permanent=permanent,
        verdicts=tuple(verdicts),
        thinking={key: o.thinking for key, o in outputs.items() if o.thinking},
    )


async def evaluate(
    task: base.Task[Any, Any],
    item: base.Item[Any],
    model: str,
    caller: Asker,
    judges: Sequence[str],
    mode: base.AnswerMode = "generate",
) -> ItemRecord:
    """The record of one item answered by one model (a twin's, read as it happened)."""
    if mode not in task.answer_modes:
        mode = "generate"  # a task without a choice form is answered by generation
    outputs = await ask_all(caller, item, task.queries(item, mode), model)
    item = item.as_happened()  # a twin's answer is read, scored and judged on the real one
    failed = failure(outputs)
    if failed is not None:
        return record(item, model, mode, "failed", outputs, error=failed[0], permanent=failed[1])
    try:
        prediction = task.parse(item, outputs)
    except base.InvalidAnswer as invalid:
        scored = task.worst(item, invalid.partial)
        return record(
            item,
            model,
            mode,
            "invalid",
            outputs,
            prediction=invalid.partial,
            scored=scored,
            error=str(invalid),
        )
    judge_queries = task.judge_queries(item, prediction, judges)
    if not judge_queries:
        scored = task.score(item, prediction)
        return record(item, model, mode, "ok", outputs, prediction=prediction, scored=scored)
    answers = await ask_all(caller, item, judge_queries, model)
    verdicts = [
        base.JudgedVerdict(q, read_verdict(q.model or model, q, answers[q.key]))
        for q in judge_queries
    ]
    judged_failure = failure({q.key: answers[q.key] for q in judge_queries if not q.of_reference})
    scored = task.judged(item, prediction, verdicts)
    error = scored.invalid
    if judged_failure is not None:
        # A verdict lost for good is a loss, like an unreadable one: leaving the item unscored
        # would let a judge that fails on a model's worst replies drop them from its numbers.
        scored = replace(scored, flags=(*scored.flags, JUDGE_FAILED))
        error = "; ".join(e for e in (f"judge: {judged_failure[0]}", error) if e)
    status: Status = "invalid" if scored.invalid else "ok"
    return record(
        item,
        model,
        mode,
        status,
        outputs,
        prediction=prediction,
        scored=scored,
        error=error,
        permanent=judged_failure is not None and judged_failure[1],
        verdicts=[v.verdict for v in verdicts],
    )
