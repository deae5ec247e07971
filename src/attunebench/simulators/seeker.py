"""Playing the seeker: the simulated person comes for support with a real seeker's situation
and pre-chat intensity, talks with a supporter, and says how intense the feeling is after.

The supporter is a model (`--supporter`) or, by default, the real supporter's reply at that
turn. ESConv kept only conversations whose intensity fell, so the real change is negative by
selection.
"""

from __future__ import annotations

from collections.abc import Sequence

from attunebench.data.schema import Conversation, Turn
from attunebench.data.taxonomy import taxonomy_of
from attunebench.prompts import delimit
from attunebench.simulators.answers import (
    failure,
    message_of,
    message_record,
    number_of,
    read_answer,
)
from attunebench.simulators.forms import (
    AFTER_FORM,
    INTENSITY,
    MessageGold,
    NumberGold,
)
from attunebench.simulators.prompting import (
    MESSAGE_PARAMS,
    SEEKER,
    SEEKER_AFTER,
    SUPPORTER,
    chosen,
    written,
)
from attunebench.simulators.records import Sought, Written
from attunebench.simulators.replay import FIRST_PERSON
from attunebench.simulators.session import Session
from attunebench.tasks.base import Item, Query
from attunebench.tasks.helpers.history import Utterance, history_before, turn_at
from attunebench.tasks.helpers.numeric import digits
from attunebench.tasks.helpers.prompting import chat_messages

KIND = "simulated-seeker"
DATA_SUPPORTER = "data"  # the real supporter's replies
UNNAMED_FEELING = "troubled"
FELL_ONLY = (
    "ESConv kept only conversations whose intensity fell, so the real seekers' change is "
    "negative by selection; a simulator that reports a fall is not thereby realistic"
)


def intensities(conversation: Conversation) -> tuple[float, float] | None:
    """The intensity the person reported before and after, where both are theirs."""
    given = conversation.source.provenance
    before = FIRST_PERSON in (given.get("state.intensity"), given.get("state"))
    if not before or given.get("outcome") != FIRST_PERSON:
        return None
    first, outcome = conversation.turns[0].state, conversation.outcome
    after = outcome.final_state if outcome is not None else None
    if first is None or first.intensity is None or after is None or after.intensity is None:
        return None
    return first.intensity, after.intensity


async def _message(
    session: Session,
    item: Item[MessageGold],
    said: Sequence[Utterance],
    fields: dict[str, str],
    rollout: int,
) -> Written:
    """The seeker's next message (`error` set where there is none)."""
    output = await session.ask(written(SEEKER, said, **fields), item, rollout)
    _, error = read_answer(output, message_of)  # the call's failure, or an empty message
    return message_record(item, output, rollout, SEEKER.id).model_copy(update={"error": error})


async def _reply(
    session: Session, item: Item[MessageGold], said: Sequence[Utterance]
) -> tuple[str | None, str | None]:
    """The supporter's reply and any error: the model's, or the real one at this turn (none
    where the real conversation has none)."""
    supporter = session.plan.supporter
    if supporter is None:
        reply = turn_at(item.conversation, item.turn_index).continued_response()
        return (reply.text if reply is not None else None), None
    messages = chat_messages(SUPPORTER.render()[0].content, said)
    asked = Query("reply", messages, SUPPORTER.info, MESSAGE_PARAMS)
    output = await session.engine.ask(supporter.name, asked, item, "subject")
    if failure(output) is not None or not (output.text or "").strip():
        return None, f"supporter: {failure(output) or 'empty reply'}"
    return (output.text or "").strip(), None


async def _after(
    session: Session,
    item: Item[NumberGold],
    said: Sequence[Utterance],
    fields: dict[str, str],
    rollout: int,
) -> tuple[float | None, str | None]:
    """The intensity the seeker reports after the conversation, and any error."""
    options = [(d, d) for d in digits(INTENSITY) or ()]
    shown = {"feeling": fields["feeling"], "intensity": fields["intensity"]}
    question = chosen(SEEKER_AFTER, said, shown, AFTER_FORM, options)
    output = await session.ask(question, item, rollout)
    return read_answer(
        output, lambda out: number_of(out, question, "intensity", *INTENSITY), "intensity"
    )


def opening_turn(conversation: Conversation) -> Sequence[Turn]:
    """The turn a seeker starts at, in a conversation with the person's own intensities before
    and after (none in any other)."""
    return conversation.turns[:1] if intensities(conversation) is not None else []


async def seek(session: Session, conversation: Conversation, start: Turn, rollout: int) -> Sought:
    """The first `exchanges` messages written by the simulated seeker, and the intensity after."""
    found = intensities(conversation)
    assert found is not None
    before, real_after = found
    context = conversation.context
    fields = {
        "situation": delimit("situation", context.situation or "(not described)"),
        "feeling": context.emotion or UNNAMED_FEELING,
        "intensity": f"{before:g}",
    }
    taxonomy = taxonomy_of(conversation)
    said = list(history_before(conversation, start.index))  # the context's opening, if any
    messages, replies = [], []
    error = None
    for turn in conversation.turns[: session.plan.exchanges]:
        item = Item(
            KIND, conversation, turn.index, "seeker", taxonomy, MessageGold(message=turn.user)
        )
        wrote = await _message(session, item, said, fields, rollout)
        messages.append(wrote)
        if wrote.error is not None or wrote.text is None:
            error = wrote.error
            break
        said.append(Utterance("user", wrote.text.strip(), turn.index))
        reply, error = await _reply(session, item, said)
        if reply is None:
            break
        replies.append(reply)
        said.append(Utterance("assistant", reply, turn.index))
    after = None
    if error is None:
        last = conversation.turns[-1].index
        item_after = Item(
            KIND, conversation, last, "after", taxonomy, NumberGold(intensity=real_after)
        )
        after, error = await _after(session, item_after, said, fields, rollout)
    return Sought(
        conversation_id=conversation.id,
        rollout=rollout,
        messages=messages,
        replies=replies,
        before=before,
        after=after,
        real_after=real_after,
        error=error,
    )
