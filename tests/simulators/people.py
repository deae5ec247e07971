"""Small first-person corpora with known answers, for the simulated users' planted tests.

Three kinds of conversation, each shaped like the corpus it stands for and carrying what that
corpus's people said of themselves:

- `seekers`: ESConv-like support chats: a situation, an emotion type, the intensity before
  (3-5) and after (lower), feedback (1-5) on the replies, an end survey;
- `writers`: Topical-Chat-like chats: each message self-labelled from Topical-Chat's eight
  sentiments (more negative ones late in the conversation), the partner's messages rated;
- `thumbs`: ConvAI1-like bot chats: each bot message thumbed up (1) or down (0).

The person's messages and the other side's are drawn from different phrases, so a
classifier can tell them apart; each conversation's messages differ.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attunebench.data.jsonl import write_conversations
from attunebench.data.schema import (
    Context,
    Conversation,
    Outcome,
    Participant,
    RatingScale,
    Response,
    Source,
    State,
    Turn,
)

PERSON = (
    "i feel so tired",
    "my exam went badly",
    "my mom keeps calling me",
    "i cannot sleep at night",
    "work is piling up",
    "my friend stopped talking to me",
    "i am worried about money again",
    "today was awful",
)
OTHER = (
    "that sounds really hard",
    "have you tried talking to someone you trust",
    "it is okay to feel this way",
    "what helps you relax",
    "maybe a short walk could help",
    "i hear you",
    "take care of yourself",
    "you are doing your best",
)
EMOTIONS = ("anxiety", "sadness", "fear", "anger", "shame")
SENTIMENTS = ("Curious to dive deeper", "Neutral", "Happy", "Surprised", "Sad", "Angry")
NEGATIVE_LATE = ("Sad", "Angry")
FIRST_PERSON = "first-person"


def _said(rng: np.random.Generator, phrases: tuple[str, ...], n: int = 3) -> str:
    return " ".join(rng.choice(phrases, size=n).tolist())


def seekers(n: int, seed: int = 0, turns: int = 6) -> list[Conversation]:
    rng = np.random.default_rng(seed)
    source = Source(
        kind="imported",
        name="seekers",
        provenance={
            "context.emotion": FIRST_PERSON,
            "state.intensity": FIRST_PERSON,
            "outcome": FIRST_PERSON,
            "rating": FIRST_PERSON,
        },
        rating_scale=RatingScale(low=1, high=5, description="the seeker's feedback, 1 to 5"),
    )
    out = []
    for c in range(n):
        before = float(rng.integers(3, 6))
        after = float(rng.integers(1, int(before)))
        made = []
        for t in range(turns):
            feedback = float(rng.integers(1, 6))
            reply = Response(id="supporter", text=_said(rng, OTHER), rating=feedback)
            state = State(intensity=before) if t == 0 else None
            made.append(
                Turn(
                    index=t,
                    user=_said(rng, PERSON),
                    state=state,
                    responses=(reply,),
                    feedback=feedback if t % 2 else None,
                    continued="supporter",
                )
            )
        outcome = Outcome(
            final_state=State(intensity=after), survey={"empathy": float(rng.integers(1, 6))}
        )
        context = Context(emotion=EMOTIONS[c % len(EMOTIONS)], situation=_said(rng, PERSON, 5))
        out.append(
            Conversation(
                id=f"seeker-{c:03d}",
                source=source,
                participant=Participant(id=f"p-{c}"),
                taxonomy="esconv",
                context=context,
                turns=tuple(made),
                outcome=outcome,
            )
        )
    return out


def writers(n: int, seed: int = 0, turns: int = 9) -> list[Conversation]:
    """Self-labels drawn so that the last third is mostly negative."""
    rng = np.random.default_rng(seed)
    source = Source(
        kind="imported",
        name="writers",
        provenance={"state": FIRST_PERSON, "rating": FIRST_PERSON},
        rating_scale=RatingScale(low=1, high=5),
    )
    out = []
    for c in range(n):
        made = []
        for t in range(turns):
            late = t >= 2 * turns // 3
            label = str(rng.choice(NEGATIVE_LATE if late else SENTIMENTS[:4]))
            reply = Response(id="partner", text=_said(rng, OTHER), rating=float(rng.integers(1, 6)))
            made.append(
                Turn(
                    index=t,
                    user=_said(rng, PERSON),
                    state=State(emotions=(label,), primary=label),
                    responses=(reply,),
                    continued="partner",
                )
            )
        out.append(
            Conversation(
                id=f"writer-{c:03d}", source=source, taxonomy="topical-chat", turns=tuple(made)
            )
        )
    return out


def thumbs(n: int, seed: int = 0, turns: int = 5, down: float = 0.3) -> list[Conversation]:
    """Each bot message thumbed down with chance `down`."""
    rng = np.random.default_rng(seed)
    source = Source(
        kind="imported",
        name="thumbs",
        provenance={"rating": FIRST_PERSON},
        rating_scale=RatingScale(low=0, high=1, description="thumbs: 0 down, 1 up"),
    )
    out = []
    for c in range(n):
        made = [
            Turn(
                index=t,
                user=_said(rng, PERSON),
                responses=(
                    Response(id="bot", text=_said(rng, OTHER), rating=float(rng.random() >= down)),
                ),
                continued="bot",
            )
            for t in range(turns)
        ]
        out.append(
            Conversation(id=f"thumbs-{c:03d}", source=source, taxonomy="convai1", turns=tuple(made))
        )
    return out


def written(path: Path, conversations: list[Conversation]) -> Path:
    write_conversations(path, conversations)
    return path
