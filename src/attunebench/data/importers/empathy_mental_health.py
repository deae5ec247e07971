"""Empathy-Mental-Health (EPITOME, Reddit): replies to support posts, rated for empathy (`SOURCE`).

The three mechanism files hold the same (post, reply) rows in the same order; they are read in
step and checked to agree row by row.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from attunebench.data.importers._base import (
    ImportFormatError,
    Location,
    Tally,
    conversation,
    text,
)
from attunebench.data.importers._csv_rows import csv_rows
from attunebench.data.schema import Conversation, Source

TAXONOMY_ID = "empathy-mental-health"
FILES = {
    "emotional-reactions": "emotional-reactions-reddit.csv",
    "interpretations": "interpretations-reddit.csv",
    "explorations": "explorations-reddit.csv",
}
COLUMNS = ("sp_id", "rp_id", "seeker_post", "response_post", "level", "rationales")
LEVELS = {"0": "none", "1": "weak", "2": "strong"}

SOURCE = Source(
    kind="imported",
    name="Empathy-Mental-Health",
    license="non-commercial academic research (Althoff academic license; see SOURCE.md)",
    url="https://github.com/behavioral-data/Empathy-Mental-Health",
    citation=(
        "Sharma, Miner, Atkins, Althoff. A Computational Approach to Understanding Empathy "
        "Expressed in Text-Based Mental Health Support. EMNLP 2020."
    ),
    provenance={"behaviors": "third-party"},
    notes=(
        "Reddit portion of EPITOME. Each seeker post is a one-turn conversation; its Reddit "
        "replies are the responses, none continued. A reply's behaviors are trained annotators' "
        "empathy levels (third-party), one label per mechanism: emotional reactions, "
        "interpretations, explorations, each none | weak | strong. Where a (post, reply) pair "
        "is on several rows, the first row's levels are kept; rationale spans are not imported."
    ),
)


@dataclass(frozen=True)
class Reply:
    location: Location
    seeker_post: str
    reply_id: str
    text: str
    behaviors: tuple[str, ...]


def _reply(rows: list[tuple[Location, dict[str, str]]], tally: Tally) -> tuple[str, Reply]:
    """One post's reply from the same row of each file, after checking that the rows agree."""
    (first_location, first), *others = rows
    key = (first["sp_id"], first["rp_id"])
    for location, values in others:
        if (values["sp_id"], values["rp_id"]) != key:
            raise ImportFormatError(
                location,
                "sp_id/rp_id",
                f"{values['sp_id']!r}/{values['rp_id']!r} differs from "
                f"{key[0]!r}/{key[1]!r} on the same row of {first_location}",
            )
    behaviors = []
    for (location, values), mechanism in zip(rows, FILES, strict=True):
        level = values["level"].strip()
        if level not in LEVELS:
            raise ImportFormatError(location, "level", f"{level!r} is not 0, 1 or 2")
        tally[f"{mechanism}:{level}"] += 1
        behaviors.append(f"{mechanism}-{LEVELS[level]}")
        tally["dropped:rationale spans"] += sum(1 for s in values["rationales"].split("|") if s)
    post = text(first["sp_id"], first_location, "sp_id")
    return post, Reply(
        location=first_location,
        seeker_post=text(first["seeker_post"], first_location, "seeker_post"),
        reply_id=text(first["rp_id"], first_location, "rp_id"),
        text=text(first["response_post"], first_location, "response_post"),
        behaviors=tuple(behaviors),
    )


def _posts(source: Path, tally: Tally) -> dict[str, list[Reply]]:
    """Replies by seeker post, in the order posts first appear (the files are not sorted)."""
    readers = [csv_rows(source / name, COLUMNS) for name in FILES.values()]
    posts: dict[str, list[Reply]] = {}
    while True:
        rows = [next(reader, None) for reader in readers]
        if all(row is None for row in rows):
            return posts
        if any(row is None for row in rows):
            shorter = [name for name, row in zip(FILES.values(), rows, strict=True) if row is None]
            where = next(row for row in rows if row is not None)[0]
            raise ImportFormatError(where, "row", f"has no counterpart in {', '.join(shorter)}")
        tally["rows"] += 1
        post, reply = _reply([row for row in rows if row is not None], tally)
        replies = posts.setdefault(post, [])
        first = next((r for r in replies if r.reply_id == reply.reply_id), None)
        if first is not None:
            tally["dropped:repeated rows of a (post, reply) pair, first kept"] += 1
            tally["repeated rows disagreeing on a level"] += first.behaviors != reply.behaviors
        elif replies and replies[0].seeker_post != reply.seeker_post:
            raise ImportFormatError(
                reply.location,
                "seeker_post",
                f"differs from post {post!r} at {replies[0].location}",
            )
        else:
            replies.append(reply)


@dataclass(frozen=True)
class EmpathyMentalHealthImporter:
    """EPITOME's Reddit replies: annotators' empathy levels (reactions, interpretations,
    explorations) as each reply's behaviors."""

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        for post, replies in _posts(source, tally).items():
            tally["posts"] += 1
            tally["replies"] += len(replies)
            yield conversation(
                replies[0].location,
                id=f"empathy-reddit-{post}",
                source=SOURCE,
                taxonomy=TAXONOMY_ID,
                turns=[
                    {
                        "index": 0,
                        "user": replies[0].seeker_post,
                        "responses": [
                            {"id": r.reply_id, "text": r.text, "behaviors": r.behaviors}
                            for r in replies
                        ],
                    }
                ],
            )
