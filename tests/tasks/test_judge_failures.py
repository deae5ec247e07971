"""A judge call that fails for good is a loss for the model judged, never a dropped item.

Planted truth: two models of equal quality, each writing a good or a bad reply at random; the
judge prefers a good reply to both references and a bad one to neither, and fails (a content
filter's 400, or timeouts past the retries) on a share of one model's bad replies. The failing
judge must not raise that model's win rate: its score is exactly what a judge that never failed
gives it, every item stays in both models' numbers, and the count is shown.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from task_harness import Harness, conversation, judged_runs, make_task, two_reply_turn

from attunebench.analysis.loading import Runs
from attunebench.analysis.summary import Options, build_summary
from attunebench.answerform import TaskHint
from attunebench.data.schema import Conversation, State
from attunebench.models.base import Message, ProviderError
from attunebench.models.mock import MockProvider
from attunebench.records import JUDGE_FAILED, ItemRecord, retry_on_resume
from attunebench.report import render_markdown

CONVERSATIONS = 80
FLAKY, TWIN = "m/flaky", "m/twin"
FILTER = ProviderError("HTTP 400: the response was flagged by the content filter", retryable=False)
TIMEOUT = ProviderError("timed out after 30 s", retryable=True)


def _draw(*parts: str) -> float:
    digest = hashlib.sha256("|".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def dialogues() -> list[Conversation]:
    return [
        conversation(
            [two_reply_turn(0, f"case-{c}: I cannot sleep.", state=State(primary="anxiety"))],
            cid=f"c{c:03d}",
        )
        for c in range(CONVERSATIONS)
    ]


def writer(model: str) -> object:
    """Good or bad at random, 50:50, independently for each model and conversation."""

    def reply(messages: list[Message], hint: TaskHint | None) -> str:
        case = messages[-1].content.split(":")[0]
        quality = "GOOD" if _draw(model, case) < 0.5 else "BAD"
        return f"{quality} reply from {model} to {case}"

    return reply


def judge(fail_share: float, error: ProviderError | None) -> object:
    """Sides with a good reply, against a bad one; fails on `fail_share` of the flaky model's
    bad replies (every call about them, every attempt)."""

    def verdict(messages: list[Message], hint: TaskHint | None) -> str:
        assert hint is not None
        shown = " ".join(hint.candidates.values()) if hint.candidates else hint.text
        if error is not None and f"BAD reply from {FLAKY}" in shown:
            case = shown.split(f"BAD reply from {FLAKY} to ")[1].split()[0]
            if _draw("fail", case) < fail_share:
                raise error
        if hint.kind == "judge_rubric":
            return json.dumps({"score": 9 if "GOOD reply" in shown else 2})
        model_side = "A" if " reply from m/" in hint.candidates["A"] else "B"
        good = "GOOD reply" in hint.candidates[model_side]
        return json.dumps({"winner": model_side if good else "AB".replace(model_side, "")})

    return verdict


async def judged_records(fail_share: float, error: ProviderError | None) -> list[ItemRecord]:
    providers = {
        FLAKY: MockProvider("flaky", outputs=writer(FLAKY)),  # type: ignore[arg-type]
        TWIN: MockProvider("twin", outputs=writer(TWIN)),  # type: ignore[arg-type]
        "j": MockProvider("j", outputs=judge(fail_share, error)),  # type: ignore[arg-type]
    }
    harness = Harness(providers)  # type: ignore[arg-type]
    task = make_task("response", context="blind")
    items = list(task.items(dialogues()))
    assert len(items) == CONVERSATIONS
    return [r for m in (FLAKY, TWIN) for r in await harness.evaluate_all(task, items, m, ["j"])]


def summarised(records: list[ItemRecord]) -> Runs:
    return judged_runs(records, [FLAKY, TWIN], dialogues())


@pytest.mark.parametrize(
    ("fail_share", "error"), [(0.1, FILTER), (0.7, FILTER), (0.7, TIMEOUT)], ids=str
)
async def test_a_judge_failing_on_a_models_worst_replies_does_not_raise_its_win_rate(
    fail_share: float, error: ProviderError
) -> None:
    clean = await judged_records(fail_share, None)
    failing = await judged_records(fail_share, error)
    lost = [r for r in failing if JUDGE_FAILED in r.flags]
    bad = sum(r.model == FLAKY and "BAD" in (r.raw_output or "") for r in failing)
    assert {r.model for r in lost} == {FLAKY}
    assert 0.5 * fail_share * bad <= len(lost) <= min(bad, 1.5 * fail_share * bad + 2)
    # every verdict lost: invalid, as with no readable verdict; scored 0, a loss
    assert all(r.status == "invalid" and r.score == 0.0 for r in lost)
    assert all(r.error is not None and r.error.startswith("judge: ") for r in lost)
    assert all(r.permanent is error.permanent for r in lost)
    assert all(retry_on_resume(r) is error.retryable for r in lost)  # a timeout: asked again

    options = Options(resamples=200, permutations=99)
    before = build_summary(summarised(clean), options)
    after = build_summary(summarised(failing), options)
    rows = {r.model: r for r in after.scores if r.headline}
    truth = {r.model: r for r in before.scores if r.headline}
    flaky, twin = rows[FLAKY], rows[TWIN]
    assert flaky.n == twin.n == CONVERSATIONS  # no item left out for either model
    assert after.left_out_items == [] and after.tasks[0].left_out_items == 0
    assert flaky.value == pytest.approx(truth[FLAKY].value)  # exactly the clean judge's score
    assert twin.value == pytest.approx(truth[TWIN].value)
    assert flaky.n_judge_failed == len(lost) and twin.n_judge_failed == 0
    assert flaky.n_failed == 0
    notice = next(w for w in after.warnings if w.kind == "judge_failed")
    assert notice.model == FLAKY and notice.message.startswith(f"{len(lost)} of {CONVERSATIONS}")
    assert f"{len(lost)} judge failed" in render_markdown(after)
