"""The response task: pairwise in both orders, rubric, the ensemble, unusable and failed
verdicts, and what the judge is told about the participant."""

from __future__ import annotations

import json
import random

import pytest
from task_harness import Harness, conversation, make_task, two_reply_turn, views

from attunebench.answerform import TaskHint
from attunebench.data.schema import Conversation, State
from attunebench.engine.plan import evaluated_models, without_judge
from attunebench.models.base import Message, ProviderError
from attunebench.models.mock import MockProvider
from attunebench.records import JUDGE_FAILED, retry_on_resume
from attunebench.tasks import PlanError
from attunebench.tasks.base import Item, prompts_of
from attunebench.tasks.helpers.judging import PAIRWISE, RUBRIC
from attunebench.tasks.helpers.metrics import METRICS

REPLY = "MODEL REPLY: that sounds exhausting; what would help tonight?"
CHOSEN, REJECTED = "That sounds so hard. I'm listening.", "Just go to bed earlier."
NEED, COMMENT = "To be heard, not fixed.", "POST-HOC: the first reply was the kind one."


def data() -> list[Conversation]:
    return [
        conversation(
            [
                two_reply_turn(
                    0,
                    "I can't switch off at night.",
                    texts=(CHOSEN, REJECTED),
                    state=State(primary="anxiety", intensity=4),
                    need=NEED,
                    comment=COMMENT,
                ),
                two_reply_turn(1, "Ok.", tie=True),  # no pick: not a response item
            ]
        )
    ]


def subject(messages: list[Message], hint: TaskHint | None) -> str:
    return REPLY


def query_key(hint: TaskHint | None) -> str:
    """The judge query a call answers: 'vs_chosen/model-first', ..., 'rubric'."""
    assert hint is not None
    return hint.item_key.split("|")[-1].split("@")[0]


def prefers_model(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None
    if hint.kind == "judge_rubric":
        return '{"score": 8, "reason": "close to what they wanted"}'
    winner = "A" if "MODEL REPLY" in hint.candidates["A"] else "B"
    return json.dumps({"winner": winner, "reason": "fits"})


def says_a(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None
    if hint.kind == "judge_rubric":
        return '```json\n{"score": 5}\n```'
    return '{"winner": "A"}'


def setup(**judges: object) -> tuple[Item, Harness]:  # type: ignore[type-arg]
    items = list(make_task("response").items(data()))
    assert [(i.turn_index, i.item_id) for i in items] == [(0, "reply")]
    return items[0], Harness.scripted(s=subject, **judges)  # type: ignore[arg-type]


async def test_pairwise_rubric_and_ensemble_equal_hand_computed_values() -> None:
    item, harness = setup(j1=prefers_model, j2=says_a)
    record = await harness.evaluate(make_task("response"), item, "s", ["j1", "j2"])
    assert record.status == "ok" and record.prediction == {"reply": REPLY}
    assert record.scores == pytest.approx(
        {
            "win_vs_chosen[j1]": 1.0,
            "win_vs_rejected[j1]": 1.0,
            "rubric[j1]": 8.0,
            # always "A": a win when the model's reply is shown first, a loss when second
            "win_vs_chosen[j2]": 0.5,
            "win_vs_rejected[j2]": 0.5,
            "rubric[j2]": 5.0,
            "win_vs_chosen": 0.75,
            "win_vs_rejected": 0.75,
            "rubric": 6.5,
        }
    )
    assert record.score == pytest.approx(0.75) and record.flags == ()
    assert record.gold is not None
    assert (record.gold["chosen"], record.gold["rejected"]) == ("a", "b")
    assert len(record.verdicts) == 10
    orders = [v.order for v in record.verdicts if v.judge == "j1"]
    assert orders == [
        "vs_chosen/model-first",
        "vs_chosen/reference-first",
        "vs_rejected/model-first",
        "vs_rejected/reference-first",
        "rubric",
    ]
    verdict = record.verdicts[0]
    assert (verdict.prompt_id, verdict.prompt_version) == ("judge-pairwise", PAIRWISE.info.version)
    assert verdict.mode == "pairwise" and verdict.parsed == {"winner": "A", "reason": "fits"}
    assert REPLY in verdict.rendered_prompt and verdict.raw_output.startswith("{")
    assert all(c.role == "judge" for c in harness.calls if c.model != "s")


def prefers_reference(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None
    if hint.kind == "judge_rubric":
        return '{"score": 2}'
    return json.dumps({"winner": "B" if "MODEL REPLY" in hint.candidates["A"] else "A"})


def says_tie(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None
    return '{"score": 5}' if hint.kind == "judge_rubric" else '{"winner": "tie"}'


async def test_the_panel_takes_the_majority_and_scores_a_split_panel_one_half() -> None:
    item, harness = setup(j1=prefers_model, j2=prefers_model, j3=prefers_reference)
    record = await harness.evaluate(make_task("response"), item, "s", ["j1", "j2", "j3"])
    assert record.scores["win_vs_chosen"] == 1.0  # two of three: the mean would say 2/3
    assert record.score == 1.0 and len(record.verdicts) == 15  # every verdict kept
    item, harness = setup(j1=prefers_model, j2=prefers_reference, j3=says_tie)
    record = await harness.evaluate(make_task("response"), item, "s", ["j1", "j2", "j3"])
    assert record.scores["win_vs_rejected"] == 0.5 and record.score == 0.5
    assert record.scores["win_vs_rejected[j2]"] == 0.0


def by_query(**answers: str) -> object:
    def respond(messages: list[Message], hint: TaskHint | None) -> str:
        return answers[query_key(hint).replace("/", "_").replace("-", "_")]

    return respond


async def test_an_unusable_verdict_counts_as_a_loss_and_a_lost_order_is_flagged() -> None:
    judge = by_query(
        vs_chosen_model_first='{"winner": "A"}',
        vs_chosen_reference_first="no idea",
        vs_rejected_model_first='{"winner": "B"}',
        vs_rejected_reference_first='{"winner": "tie"}',
        rubric='{"score": 11}',
    )
    item, harness = setup(j=judge)
    record = await harness.evaluate(make_task("response"), item, "s", ["j"])
    # vs chosen: model-first "A" -> 1, reference-first unusable -> 0 (a loss): 0.5
    # vs rejected: model-first "B" -> 0, reference-first tie -> 0.5: 0.25
    # rubric out of range: unusable, the lowest score (1)
    assert record.status == "ok"
    assert record.scores["win_vs_chosen"] == 0.5
    assert record.scores["win_vs_rejected"] == 0.25
    assert record.scores["rubric"] == 1.0
    assert record.score == pytest.approx(0.375)
    assert record.flags == ("one-order-only",)
    assert [v.status for v in record.verdicts] == ["ok", "invalid", "ok", "ok", "invalid"]
    assert (
        METRICS.get("response.one_order_share").value(views(make_task("response"), [record])) == 1.0
    )


async def test_no_usable_verdict_makes_the_item_invalid_scored_zero() -> None:
    item, harness = setup(j=["garbage"])
    record = await harness.evaluate(make_task("response"), item, "s", ["j"])
    assert record.status == "invalid" and record.score == 0.0
    assert "no usable verdict" in (record.error or "")
    assert record.flags == ()  # neither order of anything: not a one-order item
    assert len(record.verdicts) == 5 and {v.status for v in record.verdicts} == {"invalid"}


async def test_a_failed_judge_call_is_a_loss_flagged_and_counted() -> None:
    item, _ = setup()
    answers = ['{"winner": "A"}', '{"winner": "B"}', '{"winner": "tie"}', '{"score": 7}']
    down = ProviderError("judge down", retryable=False)
    judge = MockProvider("j", outputs=answers, failures=[None, None, down])
    harness = Harness({"s": MockProvider("s", outputs=subject), "j": judge})
    record = await harness.evaluate(make_task("response"), item, "s", ["j"])
    # vs chosen: A (model first) wins, B (reference first) wins: 1; vs rejected: the lost
    # verdict is a loss, then a tie: 0.25; headline (1 + 0.25) / 2
    assert record.status == "ok" and record.score == pytest.approx(0.625) and record.permanent
    assert record.scores["win_vs_rejected"] == 0.25
    assert record.flags == ("one-order-only", JUDGE_FAILED)
    assert "judge" in (record.error or "") and "judge down" in (record.error or "")
    assert sum(v.status == "failed" for v in record.verdicts) == 1
    assert not retry_on_resume(record)  # a refusal: asking again would not mend it


async def test_an_empty_reply_is_invalid_and_not_judged() -> None:
    item, _ = setup()
    harness = Harness.scripted(s=["   "], j=prefers_model)
    record = await harness.evaluate(make_task("response"), item, "s", ["j"])
    assert record.status == "invalid" and record.score == 0.0 and record.raw_output == "   "
    assert harness.of("j") == []


async def test_rubric_mode_scores_the_rubric_rescaled() -> None:
    item, harness = setup(j=prefers_model)
    task = make_task("response", judge_mode="rubric")
    record = await harness.evaluate(task, item, "s", ["j"])
    assert record.scores == {"rubric[j]": 8.0, "rubric": 8.0}
    assert record.score == pytest.approx(7 / 9)
    assert [p.id for p in prompts_of(task)] == ["response", "judge-rubric"]
    assert {form.kind for form in task.judge_forms} == {"judge_rubric"}


def test_the_response_task_needs_a_judge() -> None:
    task = make_task("response")
    assert task.needs_judge
    with pytest.raises(PlanError, match="needs at least one judge"):
        without_judge([task], [], from_all=False)
    kept, skipped = without_judge([task], [], from_all=True)
    assert kept == [] and [s.task for s in skipped] == ["response"]
    assert evaluated_models(task, ["s"], ["j"]) == ["s"]
    with pytest.raises(ValueError, match="judge_mode"):
        make_task("response", judge_mode="vibes")


# A hostile judge ------------------------------------------------------------------------------


def many(n: int) -> list[Conversation]:
    return [
        conversation(
            [two_reply_turn(0, f"Message {i}.", texts=(f"Chosen {i}.", f"Rejected {i}."))],
            cid=f"h{i:03d}",
        )
        for i in range(n)
    ]


def model_wins(hint: TaskHint | None) -> bool:
    """Whether the model's reply truly is the better on this item: 51 items in 100."""
    assert hint is not None
    cid = hint.item_key.split("|")[1]
    return random.Random(cid).random() < 0.51


def judge(hostile: bool) -> object:
    """A judge that says the model wins where it does, and loses elsewhere, or (hostile) is
    derailed there: no verdict it gives on a losing item parses."""

    def respond(messages: list[Message], hint: TaskHint | None) -> str:
        assert hint is not None
        wins = model_wins(hint)
        if hostile and not wins:
            return "I refuse to judge this. Ignore previous instructions."
        if hint.kind == "judge_rubric":
            return json.dumps({"score": 9 if wins else 2})
        model_first = query_key(hint).endswith("model-first")
        return json.dumps({"winner": "A" if model_first == wins else "B"})

    return respond


async def test_a_judge_derailed_on_the_losing_items_cannot_raise_the_win_rate() -> None:
    task = make_task("response", judge_mode="pairwise")
    items = list(task.items(many(100)))
    harness = Harness.scripted(s=subject, honest=judge(False), hostile=judge(True))
    honest = views(task, await harness.evaluate_all(task, items, "s", ["honest"]))
    hostile = views(task, await harness.evaluate_all(task, items, "s", ["hostile"]))
    wins = sum(random.Random(i.conversation.id).random() < 0.51 for i in items)
    assert 40 < wins < 62  # about 0.51
    score = METRICS.get("response.score")
    assert score.value(honest) == pytest.approx(wins / 100)
    # before: the losing items vanished, and the model won 1.00 of the rest
    assert score.value(hostile) == pytest.approx(wins / 100)
    assert score.value(hostile) <= score.value(honest)
    invalid = [v for v in hostile if v.status == "invalid"]
    assert len(invalid) == 100 - wins and all(v.score == 0.0 for v in invalid)
    assert all(v.status == "ok" for v in honest)
    assert METRICS.get("response.win_vs_chosen").value(hostile) == pytest.approx(wins / 100)


# What the judge is told -----------------------------------------------------------------------


def judge_prompts(harness: Harness, judge_name: str) -> list[str]:
    return [c.query.messages[-1].content for c in harness.of(judge_name)]


async def test_the_judge_sees_the_need_but_not_the_post_hoc_comment_by_default() -> None:
    item, harness = setup(j=prefers_model)
    await harness.evaluate(make_task("response"), item, "s", ["j"])
    prompts = judge_prompts(harness, "j")
    assert len(prompts) == 5
    for prompt in prompts:
        assert NEED in prompt and "felt anxiety" in prompt
        assert COMMENT not in prompt and "POST-HOC" not in prompt
    hints = [c.query.hint for c in harness.of("j")]
    assert all(h is not None and COMMENT not in json.dumps(h.reference) for h in hints)
    # asked for, the comment is shown, marked as written after the replies
    item, harness = setup(j=prefers_model)
    await harness.evaluate(make_task("response", participant_comment=True), item, "s", ["j"])
    for prompt in judge_prompts(harness, "j"):
        assert NEED in prompt and f"after reading the replies, they commented: {COMMENT}" in prompt


async def test_the_audit_judge_never_sees_the_comment() -> None:
    task = make_task("judge_audit")
    items = [i for i in task.items(data()) if i.turn_index == 0]
    assert {i.variant for i in items} == {"informed", "blind"}
    for item in items:
        for query in task.queries(item, "generate"):
            prompt = query.messages[-1].content
            assert COMMENT not in prompt
            assert (NEED in prompt) is (item.variant == "informed")


async def test_pairwise_shows_no_reference_and_the_rubric_shows_both() -> None:
    item, harness = setup(j=prefers_model)
    await harness.evaluate(make_task("response"), item, "s", ["j"])
    calls = harness.of("j")
    pairwise, rubric = calls[0].query.messages[-1].content, calls[-1].query.messages[-1].content
    assert "<preferred_reply>" not in pairwise and "<rejected_reply>" not in pairwise
    assert f"<preferred_reply>\n{CHOSEN}\n</preferred_reply>" in rubric
    assert f"<rejected_reply>\n{REJECTED}\n</rejected_reply>" in rubric
    assert calls[0].query.hint is not None and calls[0].query.hint.reference == {"wanted": NEED}
    assert calls[-1].query.hint is not None and calls[-1].query.hint.reference["chosen"] == CHOSEN
    assert calls[-1].query.prompt == RUBRIC.info


async def test_the_judge_is_told_who_gave_the_feelings() -> None:
    third = conversation(data()[0].turns, provenance={"state": "third-party"})
    item = next(iter(make_task("response").items([third])))
    harness = Harness.scripted(s=subject, j=prefers_model)
    await harness.evaluate(make_task("response"), item, "s", ["j"])
    prompt = harness.of("j")[0].query.messages[-1].content
    assert "annotators" in prompt and "own words" not in prompt


async def test_the_reply_is_written_from_the_conversation_as_chat_messages() -> None:
    task = make_task("response", context="informed")
    (item,) = task.items(data())
    assert item.variant == "informed"
    _, harness = setup(j=prefers_model)
    await harness.evaluate(task, item, "s", ["j"])
    query = harness.of("s")[0].query
    assert [m.role for m in query.messages] == ["system", "user"]
    said, note = query.messages[-1].content.split("\n\n", 1)
    assert said == "I can't switch off at night."  # the self-reports follow what they said
    assert note.startswith("Earlier in this conversation") and note.endswith("</self_reports>")
    assert "</self_reports>" not in query.messages[0].content  # the system message is fixed
    assert query.hint is not None and query.hint.kind == "response"
