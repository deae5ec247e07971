"""History is the conversation as it happened; informed prompts add only the self-reports."""

from __future__ import annotations

from task_harness import (
    Harness,
    conversation,
    make_task,
    mock_answer,
    rendered,
    two_reply_turn,
)

from attunebench.answerform import TaskHint
from attunebench.data.derived import conversation_level
from attunebench.data.schema import Conversation, State
from attunebench.models.base import Message
from attunebench.tasks import load_tasks
from attunebench.tasks.base import takes_option
from attunebench.tasks.helpers.history import (
    describe_state,
    history_before,
    history_through,
    self_reports_before,
)
from attunebench.tasks.helpers.prompting import chat_messages, self_reports_block

MODEL_SAYS = "MODEL-OUTPUT-MARKER: this is the evaluated model's own reply."


def three_turns() -> Conversation:
    return conversation(
        [
            two_reply_turn(
                0,
                "First message.",
                texts=("Kept reply zero.", "Dropped reply zero."),
                state=State(primary="anxiety", intensity=4),
                continued="a",
            ),
            two_reply_turn(
                1,
                "Second message.",
                texts=("Dropped reply one.", "Kept reply one."),
                state=State(primary="sadness"),
                continued="b",
            ),
            two_reply_turn(2, "Third message.", state=State(primary="hope", valence=0.4)),
        ],
        opening="Hi, what's on your mind?",
    )


def test_history_holds_what_was_said_and_the_replies_the_conversation_went_on_with() -> None:
    said = [(u.speaker, u.text) for u in history_before(three_turns(), 2)]
    assert said == [
        ("assistant", "Hi, what's on your mind?"),
        ("user", "First message."),
        ("assistant", "Kept reply zero."),
        ("user", "Second message."),
        ("assistant", "Kept reply one."),
    ]
    assert history_through(three_turns(), 2)[-1].text == "Third message."


def test_self_reports_are_only_those_of_earlier_turns() -> None:
    reports = self_reports_before(three_turns(), 2)
    assert [(r.turn_index, r.state.primary) for r in reports] == [(0, "anxiety"), (1, "sadness")]
    assert [r.said for r in reports] == ["First message.", "Second message."]


def test_chat_messages_alternate_and_fold_the_opening_into_the_system_message() -> None:
    messages = chat_messages("Be kind.", history_through(three_turns(), 2))
    assert messages[0].role == "system" and "Hi, what's on your mind?" in messages[0].content
    roles = [m.role for m in messages[1:]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    no_continuation = conversation(
        [two_reply_turn(0, "One.", continued=None), two_reply_turn(1, "Two.")]
    )
    joined = chat_messages("Be kind.", history_through(no_continuation, 1))
    assert [m.role for m in joined] == ["system", "user"]
    assert joined[1].content == "One.\n\nTwo."


async def test_no_prompt_ever_holds_the_evaluated_models_outputs(
    sample: list[Conversation],
) -> None:
    """Every task, every turn: the model's own answers never come back to it as history."""

    def answer(messages: list[Message], hint: TaskHint | None) -> str:
        if hint is not None and hint.kind == "response":
            return MODEL_SAYS
        return mock_answer(messages, hint)

    harness = Harness.scripted(subject=answer, judge=answer)
    data = sample[:3]
    for name in load_tasks().names():  # every task a model answers
        factory = load_tasks().get(name)
        task = factory(**({"context": "both"} if takes_option(factory, "context") else {}))
        if task.evaluates == "models":
            await harness.evaluate_all(task, task.items(data), "subject", ["judge"])
    subject = harness.of("subject")
    assert {c.item.task for c in subject} >= {"emotion", "behavior", "preference", "response"}
    prompts = [m.content for c in subject for m in c.query.messages]
    assert prompts and not any(MODEL_SAYS in text for text in prompts)
    hints = [c.query.hint for c in harness.calls if c.query.hint is not None]
    assert not any(MODEL_SAYS in text for h in hints for _, text in h.history)
    # the judges do read it: the marker is not simply absent everywhere
    assert any(MODEL_SAYS in m.content for c in harness.of("judge") for m in c.query.messages)


def test_informed_and_blind_prompts_differ_only_by_the_self_reports(
    sample: list[Conversation],
) -> None:
    checked = 0
    for name in ("emotion", "behavior", "preference", "outcome"):
        task = make_task(name, context="both")
        items = {
            (i.conversation.id, i.turn_index, i.item_id, i.variant): i for i in task.items(sample)
        }
        for (cid, turn, item_id, variant), item in items.items():
            if variant != "informed":
                continue
            prompts = {
                mode: rendered(
                    task.queries(items[cid, turn, item_id, mode], "generate")[0].messages
                )
                for mode in ("blind", "informed")
            }
            conv = item.conversation
            reports_until = turn + 1 if name == "outcome" else turn
            reports = self_reports_before(conv, reports_until)
            situation = conv.context.situation if conversation_level(conv) else None
            block = self_reports_block("informed", reports, conv, situation)
            assert block and block.strip() in prompts["informed"], (name, cid, turn)
            assert (
                prompts["informed"].replace(block.strip(), "").replace("\n\n\n", "\n\n")
                == (prompts["blind"])
            ), (name, cid, turn)
            for report in reports:
                assert describe_state(report.state) in block
            checked += 1
    assert checked > 20
