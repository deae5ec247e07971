"""Continuing real conversations as the writer, and labelling the message as the writer did.

Where people labelled the feeling of every message they wrote (Topical-Chat), the simulated
person continues the real history at one of their turns and labels the message from the same
taxonomy. Each turn starts from the real history, so one bad message cannot derail the rest.
"""

from __future__ import annotations

from attunebench.data.schema import Conversation, Taxonomy, Turn
from attunebench.data.taxonomy import taxonomy_of
from attunebench.simulators.answers import label_of, message_of, message_record, read_answer
from attunebench.simulators.forms import LABEL_FORM, MessageGold
from attunebench.simulators.prompting import CONTINUE, LABEL, chosen, written
from attunebench.simulators.records import Continued
from attunebench.simulators.replay import FIRST_PERSON
from attunebench.simulators.session import Session
from attunebench.tasks.base import Item
from attunebench.tasks.helpers.history import history_before
from attunebench.tasks.helpers.prompting import label_menu

KIND = "simulated-continuation"
THIRDS = 3


def third(conversation: Conversation, turn: Turn) -> int:
    """Which third of the conversation a turn falls in (0, 1, 2)."""
    last = max(conversation.turns[-1].index, 1)
    return min(int(THIRDS * turn.index / last), THIRDS - 1)


def labelled_turns(conversation: Conversation) -> list[Turn]:
    """The turns whose writer labelled their own message (the source says first-person)."""
    if conversation.source.provenance.get("state") != FIRST_PERSON:
        return []
    return [t for t in conversation.turns if t.state is not None and t.state.emotions]


def negative(taxonomy: Taxonomy, label: str | None) -> bool | None:
    """Whether the taxonomy says the label is a negative feeling (None: it does not say)."""
    found = next((entry for entry in taxonomy.emotions if entry.name == label), None)
    return None if found is None or found.valence is None else found.valence == "negative"


async def continue_turn(
    session: Session, conversation: Conversation, turn: Turn, rollout: int
) -> Continued:
    """The simulated person's message at `turn`, and its label."""
    said = history_before(conversation, turn.index)
    taxonomy = taxonomy_of(conversation)
    state = turn.state
    label = None if state is None else state.primary or next(iter(state.emotions), None)
    gold = MessageGold(message=turn.user, label=label)
    item = Item(KIND, conversation, turn.index, "continue", taxonomy, gold)
    output = await session.ask(written(CONTINUE, said), item, rollout)
    base = message_record(item, output, rollout, CONTINUE.id)
    found = Continued(
        written=base,
        third=third(conversation, turn),
        real_label=gold.label,
        real_negative=negative(taxonomy, gold.label),
    )
    if base.error is not None:
        return found
    message, error = read_answer(output, message_of)
    if message is None:
        return found.model_copy(update={"error": error})
    labels = taxonomy.emotions
    names = tuple(label.name for label in labels)
    fields = {"message": message, "labels": label_menu(labels)}
    options = [(label.name, f"{label.name} ({label.description})") for label in labels]
    question = chosen(LABEL, said, fields, LABEL_FORM, options, names)
    answer = await session.ask(question, item, rollout)
    label, error = read_answer(answer, lambda out: label_of(out, question, labels), "label")
    if label is None:
        return found.model_copy(update={"error": error})
    return found.model_copy(update={"label": label, "negative": negative(taxonomy, label)})
