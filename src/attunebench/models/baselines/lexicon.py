"""`baseline/lexicon`: word counts from the NRC emotion lexicon and VADER sentiment, no model.

- emotion: the user's words are looked up in the NRC Emotion Lexicon (the copy `nrclex`
  ships; a word missing as written is tried without a plain English inflection: -s, -ed, -ing).
  Each of NRC's eight emotions maps onto the first of its names found in the item's label set
  (anticipation onto hope, say); the label with most hits is the primary, and every label with
  at least half as many is listed. With no hit the answer is the neutral label (or, without
  one, the joy or sadness label by the sign of VADER's compound score). Valence is VADER's
  compound score, intensity 1 + 4·|compound|; arousal is left out (the lexicon has none).
- behavior: a lexicon cannot tell what a reply does, so the answer is honestly empty:
  `{"behaviors": []}`, which scores as predicting no behavior.
- preference, and pairwise judging: the reply with the higher VADER compound score (equal
  scores: tie).
- response and rubric judging: not answered (not in `supported_hints`: a plan leaves them out).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from importlib import resources
from typing import Any

from attunebench.models.base import GenerateParams
from attunebench.models.baselines.base import (
    LABEL_AND_PAIR_KINDS,
    NEUTRAL_NAMES,
    PAIR_KINDS,
    Baseline,
    behavior_answer,
    candidate_pair,
    emotion_answer,
    first_present,
    pick_answer,
    require_labels,
)
from attunebench.models.hints import TaskHint

# NRC's eight emotions and the label names each may go by, closest first.
NRC_TO_LABELS: dict[str, tuple[str, ...]] = {
    "anger": ("anger", "angry", "annoyance", "frustration", "rage"),
    "anticipation": ("anticipation", "hope", "excitement", "eagerness"),
    "disgust": ("disgust", "contempt"),
    "fear": ("fear", "anxiety", "nervousness", "worry"),
    "joy": ("joy", "happiness", "happy", "contentment"),
    "sadness": ("sadness", "sad", "grief", "sorrow"),
    "surprise": ("surprise", "amazement", "shock"),
    "trust": ("trust", "acceptance", "admiration"),
}
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
# Plain inflections tried when a word is not in the lexicon as written: (suffix, replacement).
_INFLECTIONS = (
    ("s", ""),
    ("es", ""),
    ("ed", ""),
    ("ed", "e"),
    ("d", ""),
    ("ing", ""),
    ("ing", "e"),
)


@cache
def nrc_lexicon() -> dict[str, list[str]]:
    """The NRC lexicon nrclex ships, read from its packaged JSON (no NLTK corpora needed)."""
    path = resources.files("nrclex.data").joinpath("nrc_en.json")
    lexicon: dict[str, list[str]] = json.loads(path.read_text(encoding="utf-8"))
    return lexicon


@cache
def _vader() -> Any:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


def compound(text: str) -> float:
    """VADER's compound sentiment score, -1 (most negative) to 1 (most positive)."""
    return float(_vader().polarity_scores(text)["compound"])


def nrc_counts(text: str) -> Counter[str]:
    """How many words of `text` the NRC lexicon ties to each of its eight emotions."""
    lexicon = nrc_lexicon()
    counts: Counter[str] = Counter()
    for word in _WORD.findall(text.lower()):
        for emotion in _lookup(word, lexicon):
            if emotion in NRC_TO_LABELS:
                counts[emotion] += 1
    return counts


def _lookup(word: str, lexicon: dict[str, list[str]]) -> list[str]:
    if word in lexicon:
        return lexicon[word]
    for suffix, replacement in _INFLECTIONS:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)] + replacement
            if stem in lexicon:
                return lexicon[stem]
    return []


def lexicon_emotions(text: str, labels: tuple[str, ...]) -> list[str]:
    """The item's labels the lexicon finds in `text`, strongest first (empty without a hit)."""
    by_label: Counter[str] = Counter()
    for emotion, count in nrc_counts(text).items():
        label = first_present(NRC_TO_LABELS[emotion], labels)
        if label is not None:
            by_label[label] += count
    if not by_label:
        return []
    top = max(by_label.values())
    # Strongest first; ties keep the label set's order, so answers never depend on dict order.
    ranked = sorted(by_label, key=lambda label: (-by_label[label], labels.index(label)))
    return [label for label in ranked if 2 * by_label[label] >= top]


class LexiconBaseline(Baseline):
    supported_hints = LABEL_AND_PAIR_KINDS

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        if hint.kind == "emotion":
            return self._emotion(hint.text, require_labels(hint, self.spec))
        if hint.kind == "behavior":
            return behavior_answer([])
        if hint.kind in PAIR_KINDS:
            a, b = (compound(text) for text in candidate_pair(hint, self.spec))
            choice = "tie" if a == b else "A" if a > b else "B"
            return pick_answer(hint, choice, "baseline/lexicon: the more positive reply (VADER)")
        raise self.unsupported(hint)

    def _emotion(self, text: str, labels: tuple[str, ...]) -> str:
        score = compound(text)
        found = lexicon_emotions(text, labels)
        if found:
            primary = found[0]
        else:
            polar = NRC_TO_LABELS["joy"] if score > 0 else NRC_TO_LABELS["sadness"]
            primary = (
                first_present(NEUTRAL_NAMES, labels) or first_present(polar, labels) or labels[0]
            )
        return emotion_answer(primary, found, intensity=1 + 4 * abs(score), valence=score)
