"""`baseline/lexicon`: word counts from the NRC emotion lexicon and VADER sentiment, no model.

It answers every form whose answer names some of the hint's labels. Each of NRC's eight
emotions maps onto the first of its names found in the item's labels; the labels with at least
half as many hits as the most found are named, the most found first. With no hit, the answer
names the neutral label, or the joy or sadness label by the sign of VADER's compound score.
VADER's compound score is the text's sentiment (valence, and intensity 1 + 4 x |compound|)."""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from importlib import resources
from typing import Any

from attunebench.answerform import AnswerForm, TaskHint
from attunebench.models.base import GenerateParams, ProviderError
from attunebench.models.baselines.base import NEUTRAL_NAMES, Baseline, first_present, item_rng

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
    def answers_form(self, form: AnswerForm) -> bool:
        """A form whose answer names labels: one that says how (`labelled`)."""
        return type(form).labelled is not AnswerForm.labelled

    def unsupported_reason(self, kind: str) -> str:
        return f"{self.spec} names labels, and {kind!r} answers name none"

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        form = hint.form
        assert form is not None
        if not hint.labels:
            raise ProviderError(
                f"{self.spec}: the {hint.kind!r} hint carries no labels", retryable=False
            )
        text = "\n".join(form.reads(hint))
        named = lexicon_emotions(text, hint.labels) or plain_label(text, hint.labels)
        sentiment = compound(text)
        gold = form.labelled(hint, named, sentiment) or form.labelled(
            hint, hint.labels[:1], sentiment
        )
        if gold is None:
            raise ProviderError(
                f"{self.spec}: the {hint.kind!r} answer names no label", retryable=False
            )
        return form.from_gold(hint, gold, True, item_rng(0, hint))


def plain_label(text: str, labels: tuple[str, ...]) -> list[str]:
    """No lexicon hit: the neutral label, or joy or sadness by the text's sentiment, if listed."""
    polar = NRC_TO_LABELS["joy"] if compound(text) > 0 else NRC_TO_LABELS["sadness"]
    found = first_present(NEUTRAL_NAMES, labels) or first_present(polar, labels)
    return [found] if found else []
