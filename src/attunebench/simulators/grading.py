"""Grading the other side's real messages, as the person did while chatting.

Where a person graded the other side's messages as they came (ConvAI1's thumbs, Topical-Chat's
ratings), the simulated person grades the same message on the source's scale.
"""

from __future__ import annotations

from attunebench.data.schema import Conversation, Turn
from attunebench.data.taxonomy import taxonomy_of
from attunebench.simulators.answers import number_of, read_answer
from attunebench.simulators.forms import GRADE_FORM, NumberGold
from attunebench.simulators.prompting import GRADE, chosen
from attunebench.simulators.records import Graded
from attunebench.simulators.replay import FIRST_PERSON
from attunebench.simulators.session import Session
from attunebench.tasks.base import Item
from attunebench.tasks.helpers.history import Utterance, history_through
from attunebench.tasks.helpers.numeric import digits

KIND = "simulated-grade"
UNDESCRIBED = "from $low (worst) to $high (best)"


def graded_turns(conversation: Conversation) -> list[Turn]:
    """The turns whose reply (the one the conversation went on with) the person graded."""
    scale = conversation.source.rating_scale
    if scale is None or conversation.source.provenance.get("rating") != FIRST_PERSON:
        return []
    return [
        turn
        for turn in conversation.turns
        if (reply := turn.continued_response()) is not None and reply.rating is not None
    ]


async def grade_turn(
    session: Session, conversation: Conversation, turn: Turn, rollout: int
) -> Graded:
    """The simulated person's grade of the reply at `turn`."""
    scale = conversation.source.rating_scale
    reply = turn.continued_response()
    assert scale is not None and reply is not None and reply.rating is not None
    low, high = f"{scale.low:g}", f"{scale.high:g}"
    said = (*history_through(conversation, turn.index), Utterance("assistant", reply.text))
    gold = NumberGold(grade=reply.rating)
    item = Item(KIND, conversation, turn.index, "grade", taxonomy_of(conversation), gold)
    described = scale.description or UNDESCRIBED.replace("$low", low).replace("$high", high)
    # A scale of more than single digits has no choice form: it is asked in generate form.
    options = [(d, d) for d in digits((scale.low, scale.high)) or ()]
    fields = {"scale": described}
    question = chosen(GRADE, said, fields, GRADE_FORM, options, (low, high), low=low, high=high)
    found = Graded(
        conversation_id=conversation.id,
        turn_index=turn.index,
        rollout=rollout,
        source=conversation.source.name,
        low=scale.low,
        high=scale.high,
        real=reply.rating,
    )
    bounds = (scale.low, scale.high)
    output = await session.ask(question, item, rollout)
    given, error = read_answer(output, lambda out: number_of(out, question, "grade", *bounds))
    return found.model_copy(update={"grade": given, "error": error})
