"""Scripted participants for `collect simulate`: what they write and how they answer, by the
rules docs/collecting.md ("9. A dry run") states.

Each has a generator seeded from the run's seed and its number, so a simulated study replays
exactly; a question asked again draws from a generator of its own, so the other answers do not
move with `retest_noise`."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice

from attunebench.collect.htmlpage import Form
from attunebench.collect.questions import ATTENTION_CHECK
from attunebench.data.jsonl import read_conversations
from attunebench.data.locations import corpus_dir
from attunebench.data.sample import sample_path
from attunebench.data.taxonomy import load_taxonomy

SIMULATED_TEXT = "A simulated participant's answer."
NEEDS = (
    ("To feel listened to.", "reflection"),
    ("Some practical advice on what to do next.", "suggestion"),
    ("To hear that what I feel makes sense.", "validation"),
    ("A question that helps me think it through.", "question"),
    ("Some reassurance that I can get through this.", "reassurance"),
)
CUES = {
    "question": r"\?",
    "suggestion": r"\b(?:try|could|might|maybe|should|how about|consider)\b",
    "validation": r"\b(?:makes sense|understandable|natural|valid|of course)\b",
    "reflection": r"\b(?:sounds like|you feel|must feel|you seem|that sounds)\b",
    "reassurance": r"\b(?:you can|not alone|strong|will be ok|capable|proud)\b",
    "information": r"(?:https?://|\bwww\.|\bhotline\b|\bresources?\b)",
    "self-disclosure": r"\b(?:i also|me too|i remember|happened to me)\b",
}
SLIDERS = ("intensity", "valence", "arousal")


def corpus_messages(limit: int = 400) -> tuple[str, list[list[str]]]:
    """Where the messages come from, and each conversation's user messages."""
    source = corpus_dir("esconv")
    if source.is_dir():
        from attunebench.data.importers import ESConvImporter

        read = ESConvImporter(variant="hf", split="train").read(source, Counter())
        found = [[t.user for t in c.turns if t.user.strip()] for c in islice(read, limit)]
        return f"ESConv seeker messages ({source})", found
    sample = read_conversations(sample_path())
    return "the AttuneBench sample", [[t.user for t in c.turns] for c in sample]


def _mentions(text: str, words: tuple[str, ...]) -> bool:
    return any(re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE) for word in words)


def behaviors_of(reply: str, offered: list[str]) -> list[str]:
    """The offered behaviors whose cue words the reply holds.

    >>> behaviors_of("That sounds hard. Could you try a walk?", ["question", "suggestion"])
    ['question', 'suggestion']
    """
    return [b for b in offered if b in CUES and re.search(CUES[b], reply, re.IGNORECASE)]


@dataclass(frozen=True)
class FirstPick:
    """A pick as first given: the option, and the replies' texts by place."""

    choice: str
    replies: dict[str, str]


@dataclass
class Persona:
    """One simulated participant: its generator, its messages and what it needs."""

    rng: random.Random
    messages: list[str]
    retest_noise: float = 0.0
    retest_rng: random.Random = field(default_factory=lambda: random.Random(0))
    think_s: float = 0.0

    def __post_init__(self) -> None:
        self.need, self.wants = NEEDS[self.rng.randrange(len(NEEDS))]
        emotions = load_taxonomy("attunebench-default").emotions
        self._cues = {label.name: (label.name, *label.synonyms) for label in emotions}

    def fill_state(self, form: Form, data: dict[str, list[str]], text: str) -> None:
        offered = form.values("emotions")
        if offered:
            felt = [e for e in offered if _mentions(text, self._cues.get(e, (e,)))]
            felt = felt or [self.rng.choice(offered)]
            data["emotions"] = felt
            if form.has("primary"):
                data["primary"] = [felt[0]]
        for name in SLIDERS:
            if not form.has(name):
                continue
            slider = form.named(name)[0]
            low, high = int(slider.attrs["min"]), int(slider.attrs["max"])
            step = int(slider.attrs.get("step", "1"))
            if self.rng.random() < 0.2:
                data[name + "_unset"] = ["1"]
            data[name] = [str(self.rng.randrange(low, high + 1, step))]
        for group in form.groups("radio"):
            if group.startswith("panas_"):
                data[group] = [self.rng.choice(form.values(group))]

    def answer_questions(self, form: Form, data: dict[str, list[str]]) -> None:
        """Traits, end questions and screening: every `q_...` field of the form."""
        for control in form.controls:
            name = control.name
            if not name.startswith("q_") or name in data:
                continue
            if control.kind in ("select", "radio"):
                data[name] = [self.rng.choice(form.values(name))]
            elif control.kind == "textarea":
                data[name] = [SIMULATED_TEXT]
        if form.has(f"q_{ATTENTION_CHECK}"):
            data[f"q_{ATTENTION_CHECK}"] = [self.attend(form)]

    def attend(self, form: Form) -> str:
        """The attention check: the option its question quotes (it says which to choose)."""
        options = form.values(f"q_{ATTENTION_CHECK}")
        quoted = [
            o for o in options if o and re.search(rf"['\"‘“]{re.escape(o)}['\"’”]", form.text)
        ]
        return quoted[0] if quoted else self.rng.choice(options)

    def message(self, form: Form, text: str) -> dict[str, list[str]]:
        data: dict[str, list[str]] = {"message": [text]}
        self.fill_state(form, data, text)
        if form.has("need"):
            data["need"] = [self.need]
        if self.wants in form.values("need_behaviors"):
            data["need_behaviors"] = [self.wants]
        return data

    def judge(self, form: Form, replies: dict[str, str]) -> dict[str, list[str]]:
        data: dict[str, list[str]] = {}
        scores = {}
        for position, reply in replies.items():
            shown = behaviors_of(reply, list(CUES))
            scores[position] = (self.wants in shown) + 0.5 * ("question" in shown)
            offered = form.values(f"behaviors_{position}")
            if offered:
                data[f"behaviors_{position}"] = [b for b in shown if b in offered]
        difference = scores.get("A", 0) - scores.get("B", 0)
        if difference:
            choice = "A" if difference > 0 else "B"
        else:
            choice = "tie" if self.rng.random() < 0.5 else self.rng.choice(("A", "B"))
        data["choice"] = [choice]
        if choice != "tie" and form.has("strength"):
            data["strength"] = [str(min(3, max(1, round(abs(difference) * 2))))]
        if form.has("comment"):
            data["comment"] = [SIMULATED_TEXT]
        return data

    def _changes(self) -> bool:
        return self.retest_rng.random() < self.retest_noise

    def state_again(self, form: Form, first: dict[str, list[str]]) -> dict[str, list[str]]:
        """The emotion check of an earlier message, answered again: as first, or (`retest_noise`)
        with one other emotion, drawn at random, as the only and strongest."""
        data = {k: list(v) for k, v in first.items() if form.has(k)}
        named = (first.get("primary") or first.get("emotions") or [""])[0]
        others = [e for e in form.values("emotions") if e != named]
        if self._changes() and others:
            other = self.retest_rng.choice(others)
            data["emotions"] = [other]
            if form.has("primary"):
                data["primary"] = [other]
        return data

    def pick_again(self, replies: dict[str, str], first: FirstPick) -> dict[str, list[str]]:
        """An earlier pick, answered again with the replies wherever the page shows them (known by
        their texts): as first, or (`retest_noise`) one of the two other options, at random."""
        same = first.choice
        if same != "tie":
            text = first.replies.get(same)
            at = [position for position, shown in replies.items() if shown == text]
            # Two replies of the same text: either is the one picked; take the swapped place.
            same = at[0] if len(at) == 1 else ("B" if same == "A" else "A")
        if self._changes():
            same = self.retest_rng.choice([c for c in ("A", "B", "tie") if c != same])
        return {"choice": [same]}

    def survey(self, form: Form) -> dict[str, list[str]]:
        data: dict[str, list[str]] = {}
        self.fill_state(form, data, "relief")
        self.answer_questions(form, data)
        return data


class ClickThrough(Persona):
    """A participant who clicks through: the same short message and lowest self-report every
    turn, Reply A always, the attention check's first option, and no time taken."""

    MESSAGE = "ok"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.messages = [self.MESSAGE]
        self.think_s = 0.0

    def fill_state(self, form: Form, data: dict[str, list[str]], text: str) -> None:
        offered = form.values("emotions")
        if offered:
            data["emotions"] = offered[:1]
            if form.has("primary"):
                data["primary"] = offered[:1]
        for name in SLIDERS:
            if form.has(name):
                data[name] = [form.named(name)[0].attrs["min"]]
        for group in form.groups("radio"):
            if group.startswith("panas_"):
                data[group] = form.values(group)[:1]

    def judge(self, form: Form, replies: dict[str, str]) -> dict[str, list[str]]:
        data = {"choice": ["A"]}
        if form.has("strength"):
            data["strength"] = ["1"]
        return data

    def attend(self, form: Form) -> str:
        return form.values(f"q_{ATTENTION_CHECK}")[0]
