"""ConvAI1 (ConvAI 2017 human evaluation round): Telegram chats with a bot or with a person, each
person's thumbs on their partner's messages and their 1-5 ratings of the dialogue (`_NOTES`).

The two kinds of chat are separate variants, never mixed: `human-bot` (the human is the user)
and `human-human` (each chat from each side, `_two_party`). The release tarball is read as
published, or the two JSON files extracted beside it.
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from attunebench.data.importers._base import (
    ImportOptionError,
    Location,
    Raw,
    Tally,
    choose,
    conversation,
    json_dialogues,
    splits_for,
)
from attunebench.data.importers._two_party import Message, perspective
from attunebench.data.schema import Conversation, RatingScale, Source

SPLITS = ("train", "test")
VARIANTS = ("human-bot", "human-human")
TARBALL = "data_1501534800.tar.gz"
TAXONOMY_ID = "convai1"
BOT_MODEL = "convai1-bot"
THUMBS = {1: 0.0, 2: 1.0}  # the corpus's 0 is "not rated"
SURVEY = ("quality", "breadth", "engagement")

_NOTES = (
    "Telegram chats of the NIPS 2017 Conversational Intelligence Challenge: volunteers, mostly "
    "students writing English as a second language, talked about a SQuAD/Wikipedia paragraph "
    "(context.situation) with a 2017 chatbot or another volunteer, not knowing which. A reply's "
    "rating is the thumb the user gave that message while chatting (0 down, 1 up; merged "
    "consecutive messages: the share of thumbs up), also given as the feedback of the user's "
    "next turn; outcome.survey holds the user's own 1-5 ratings of the dialogue (quality, "
    "breadth, engagement). Messages with empty text are not imported."
)


def _source(variant: str) -> Source:
    partner = (
        "The partner is one of 10 chatbots (which one is not recorded): replies' model is "
        "convai1-bot. "
        if variant == "human-bot"
        else "The partner is another volunteer (replies' model is 'human'); each chat appears "
        "once from each person's side, ids ending -Alice and -Bob. "
    )
    return Source(
        kind="imported",
        name="ConvAI1" if variant == "human-bot" else "ConvAI1-human-human",
        license="Apache-2.0",
        url="https://github.com/deepmipt/turing-data",
        citation=(
            "Logacheva, Burtsev, Malykh et al. The Conversational Intelligence Challenge: Human "
            "Evaluation Round (2017). In The NIPS '17 Competition, Springer 2018."
        ),
        provenance={"rating": "first-person", "outcome": "first-person"},
        rating_scale=RatingScale(
            low=0, high=1, description="the user's thumb on the partner's message: 0 down, 1 up"
        ),
        notes=partner + _NOTES,
    )


class RawMessage(Raw):
    userId: str
    text: str
    evaluation: Literal[0, 1, 2] = 0


class RawUser(Raw):
    id: str
    userType: Literal["Human", "Bot"]


class RawScores(Raw):
    userId: str  # the peer being rated
    quality: int = Field(0, ge=0, le=5)
    breadth: int = Field(0, ge=0, le=5)
    engagement: int = Field(0, ge=0, le=5)


class RawDialogue(Raw):
    dialogId: int
    context: str = ""
    users: list[RawUser]
    thread: list[RawMessage]
    evaluation: list[RawScores]


def _load(source: Path, split: str) -> tuple[Path, bytes]:
    name = f"data_{split}_1501534800.json"
    if (source / name).is_file():
        path = source / name
        raw = path.read_bytes()
    elif (source / TARBALL).is_file():
        path = source / TARBALL / name
        with tarfile.open(source / TARBALL, "r:gz") as archive:
            member = archive.extractfile(name)
            if member is None:
                raise ImportOptionError(f"{source / TARBALL}: has no file {name}")
            raw = member.read()
    else:
        raise ImportOptionError(f"{source}: neither {TARBALL} nor {name} found")
    return path, raw


def _count(dialogue: RawDialogue, types: Mapping[str, str], tally: Tally) -> None:
    """The corpus's own counts (SOURCE.md's table), whatever the variant."""
    kind = "human-bot" if sorted(types.values()) == ["Bot", "Human"] else "human-human"
    tally["dialogues"] += 1
    tally[f"dialogues:{kind}"] += 1
    tally["non-empty"] += bool(dialogue.thread)
    tally["messages"] += len(dialogue.thread)
    names = {0: "unrated", 1: "down", 2: "up"}
    for message in dialogue.thread:
        side = types[message.userId].lower()
        tally[f"{side} messages"] += 1
        tally[f"{side} thumbs:{names[message.evaluation]}"] += 1
    if kind == "human-bot":
        rated = any(types[m.userId] == "Bot" and m.evaluation for m in dialogue.thread)
        tally["human-bot dialogues with a rated bot message"] += rated
        for scores in dialogue.evaluation:
            if types.get(scores.userId) == "Bot":
                tally[f"human-bot quality:{scores.quality}"] += 1


def _messages(dialogue: RawDialogue, tally: Tally) -> list[Message]:
    messages = []
    for message in dialogue.thread:
        if not message.text.strip():
            tally["dropped:messages with empty text"] += 1
            tally["dropped:thumbs on messages with empty text"] += message.evaluation != 0
            continue
        rating = THUMBS.get(message.evaluation)
        messages.append(Message(message.userId, message.text.strip(), rating=rating))
    return messages


def _survey(dialogue: RawDialogue, partner: str, tally: Tally) -> dict[str, str | float]:
    """The user's own dialogue ratings: the evaluation entry naming their partner."""
    given = next((s for s in dialogue.evaluation if s.userId == partner), None)
    if given is None:
        return {}
    scores = {key: getattr(given, key) for key in SURVEY}
    tally["dropped:dialogue ratings not given (0)"] += sum(1 for v in scores.values() if v == 0)
    return {key: float(value) for key, value in scores.items() if value > 0}


@dataclass(frozen=True)
class ConvAI1Importer:
    """ConvAI1 (2017): each person's own thumbs on their partner's messages and their 1-5
    ratings of the dialogue."""

    variant: Annotated[
        Literal["human-bot", "human-human"],
        "human-bot: a volunteer and a chatbot; human-human: two volunteers, each chat "
        "from both sides. Never mixed.",
    ] = "human-bot"
    split: Literal["train", "test", "all"] = "all"

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        variant = choose("variant", self.variant, VARIANTS)
        record_source = _source(variant)
        for split in splits_for(self.split, SPLITS):
            for location, dialogue in json_dialogues(*_load(source, split), RawDialogue):
                types = {user.id: user.userType for user in dialogue.users}
                _count(dialogue, types, tally)
                bots = [name for name, kind in types.items() if kind == "Bot"]
                if (variant == "human-bot") != bool(bots):
                    continue
                messages = _messages(dialogue, tally)
                for me in (name for name, kind in types.items() if kind == "Human"):
                    made = self._conversation(
                        split, me, dialogue, messages, location, record_source, tally
                    )
                    if made is not None:
                        yield made

    def _conversation(
        self,
        split: str,
        me: str,
        dialogue: RawDialogue,
        messages: list[Message],
        location: Location,
        source: Source,
        tally: Tally,
    ) -> Conversation | None:
        partner = next(u.id for u in dialogue.users if u.id != me)
        bot = self.variant == "human-bot"
        made = perspective(messages, me, model=BOT_MODEL if bot else "human", tally=tally)
        if not made.turns:
            tally["dropped:dialogues with no message from the user"] += 1
            return None
        survey = _survey(dialogue, partner, tally)
        suffix = "" if bot else f"-{me}"
        return conversation(
            location,
            id=f"convai1-{split}-{dialogue.dialogId}{suffix}",
            source=source,
            participant={"id": f"convai1-{split}-{dialogue.dialogId}-{me}"},
            taxonomy=TAXONOMY_ID,
            context={
                "situation": dialogue.context.strip() or None,
                "opening": made.opening,
                "labels": {"partner": "model" if bot else "person"},
            },
            turns=made.turns,
            outcome={"survey": survey} if survey else None,
        )
