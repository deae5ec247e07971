"""Topical-Chat (valid and test): two crowd workers chatting, each labelling their own messages
and rating their partner's (`SOURCE`).

A chat is read from one worker's side (`_two_party`). With `perspective=both` (the default)
each chat gives two conversations, `...-agent_1` and `...-agent_2`, which share their text:
resample them together (or pick one side per chat, as the open suite does).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from attunebench.data.importers._base import (
    Location,
    Raw,
    Tally,
    choose,
    conversation,
    json_document,
    label,
    require_file,
    splits_for,
    validated,
)
from attunebench.data.importers._two_party import Message, perspective
from attunebench.data.schema import Conversation, RatingScale, Source, Taxonomy
from attunebench.data.taxonomy import load_taxonomy

SPLITS = ("valid_freq", "valid_rare", "test_freq", "test_rare")
AGENTS = ("agent_1", "agent_2")
PERSPECTIVES = (*AGENTS, "both")
TAXONOMY_ID = "topical-chat"
LEVELS = {"Poor": 1.0, "Not Good": 2.0, "Passable": 3.0, "Good": 4.0, "Excellent": 5.0}
Level = Literal["Poor", "Not Good", "Passable", "Good", "Excellent", ""]

SOURCE = Source(
    kind="imported",
    name="Topical-Chat",
    license="CDLA-Sharing-1.0",
    url="https://github.com/alexa/Topical-Chat",
    citation=(
        "Gopalakrishnan, Hedayatnia, Chen, Gottardi, Kwatra, Venkatesh, Gabriel, Hakkani-Tür. "
        "Topical-Chat: Towards Knowledge-Grounded Open-Domain Conversations. Interspeech 2019."
    ),
    provenance={"state": "first-person", "rating": "first-person", "outcome": "first-person"},
    rating_scale=RatingScale(
        low=1,
        high=5,
        description="Poor 1, Not Good 2, Passable 3, Good 4, Excellent 5: the receiver's rating "
        "of each message, and each worker's rating of the conversation",
    ),
    notes=(
        "Human-human chats between crowd workers; the partner is a person (replies' model is "
        "'human'). Read from one worker's side: state is the label that worker gave their own "
        "message; a reply's rating is the rating this worker gave their partner's message "
        "(also the feedback of their next turn); outcome.rating is this worker's rating of the "
        "conversation. Consecutive messages of one side are merged (labels united). The "
        "partner's own labels and ratings are in the partner's conversation. knowledge_source "
        "labels and the reading sets are not imported."
    ),
)


class RawMessage(Raw):
    agent: Literal["agent_1", "agent_2"]
    message: str
    sentiment: str
    turn_rating: Level = ""


class RawChat(Raw):
    article_url: str | None = None
    config: str | None = None
    content: list[RawMessage]
    conversation_rating: dict[str, Level]


def _chats(path: Path) -> Iterator[tuple[str, Location, RawChat]]:
    raw = require_file(path).read_bytes()
    for chat_id, item in json_document(path, raw, dict, "an object of conversations").items():
        location = Location(path, item=f"conversation {chat_id}")
        yield chat_id, location, validated(RawChat, item, location)


def _messages(chat: RawChat, location: Location, taxonomy: Taxonomy, tally: Tally) -> list[Message]:
    messages = []
    for i, raw in enumerate(chat.content):
        tally["turns"] += 1
        tally[f"sentiment:{raw.sentiment}"] += 1
        tally[f"turn_rating:{raw.turn_rating or 'blank'}"] += 1
        if not raw.message.strip():
            tally["dropped:messages with empty text"] += 1
            continue
        emotion = label(taxonomy, "emotions", raw.sentiment, location, f"content[{i}].sentiment")
        messages.append(
            Message(raw.agent, raw.message.strip(), emotion, LEVELS.get(raw.turn_rating))
        )
    return messages


def _conversations(
    prefix: str, chat: RawChat, location: Location, agents: tuple[str, ...], tally: Tally
) -> Iterator[Conversation]:
    messages = _messages(chat, location, load_taxonomy(TAXONOMY_ID), tally)
    for agent in agents:
        dialogue = perspective(messages, agent, model="human", tally=tally)
        if not dialogue.turns:
            tally["dropped:sides that wrote no message"] += 1
            continue
        rating = LEVELS.get(chat.conversation_rating.get(agent, ""))
        yield conversation(
            location,
            id=f"{prefix}-{agent}",
            source=SOURCE,
            participant={"id": f"{prefix}-{agent}"},
            taxonomy=TAXONOMY_ID,
            context={
                "topic": chat.article_url,
                "opening": dialogue.opening,
                "labels": {"partner": "person", "config": chat.config or ""},
            },
            turns=dialogue.turns,
            outcome=None if rating is None else {"rating": rating},
        )


@dataclass(frozen=True)
class TopicalChatImporter:
    """Topical-Chat (valid/test): each writer's own emotion label on every message, the
    receiver's rating of it, and each worker's rating of the conversation."""

    split: Literal["valid_freq", "valid_rare", "test_freq", "test_rare", "all"] = "all"
    perspective: Annotated[
        Literal["agent_1", "agent_2", "both"],
        "Whose side each chat is read from (both: two conversations a chat).",
    ] = "both"

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        side = choose("perspective", self.perspective, PERSPECTIVES)
        agents = AGENTS if side == "both" else (side,)
        for split in splits_for(self.split, SPLITS):
            for chat_id, location, chat in _chats(source / f"{split}.json"):
                tally["conversations"] += 1
                tally[f"config:{chat.config}"] += 1
                for agent in AGENTS:
                    given = chat.conversation_rating.get(agent, "")
                    tally[f"conversation_rating:{given or 'blank'}"] += 1
                prefix = f"topical-chat-{split}-{chat_id}"
                yield from _conversations(prefix, chat, location, agents, tally)
