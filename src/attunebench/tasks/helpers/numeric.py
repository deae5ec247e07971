"""Numbers a person gave on a scale (a rating, an intensity): asked, scored and summarised the
same way by the `outcome` and `rating` tasks.

In `generate` mode the numbers are fields of one JSON answer. In `choice` mode each number on a
scale of single digits is its own question, answered by the probabilities of the digits; the
prediction keeps the expected value (used for scoring) and the most probable digit.

A number the answer leaves out scores the largest error on its scale, so abstaining never
lowers an error; coverage is reported beside each error. In choice mode a number whose scale is
not of single digits is not asked, and not scored. The per-item score is one minus the
mean absolute error over the item's numbers, each as a share of its scale's range.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field

from attunebench.answerform import TaskHint
from attunebench.frozen import Frozen
from attunebench.models.base import Message
from attunebench.records import PromptInfo
from attunebench.tasks.base import InvalidAnswer, Output, Query, Scored, View
from attunebench.tasks.helpers import metrics, parsing, prompting

Scale = tuple[float, float]


class Numbers(Frozen):
    """Predicted numbers by field; in choice mode also each field's most probable value and
    the probability of every option."""

    values: dict[str, float | None] = Field(default_factory=dict)
    argmax: dict[str, float] = Field(default_factory=dict)
    probabilities: dict[str, dict[str, float]] = Field(default_factory=dict)


def digits(scale: Scale) -> tuple[str, ...] | None:
    """The options of a scale of single whole digits (1-5), or None."""
    low, high = scale
    if low != int(low) or high != int(high) or not 0 <= low < high <= 9:
        return None
    return tuple(str(d) for d in range(int(low), int(high) + 1))


def choice_queries(
    messages: list[Message],
    prompt: PromptInfo,
    hint: TaskHint,
    questions: Mapping[str, str],
    scales: Mapping[str, Scale],
) -> list[Query]:
    """One choice query per field, keyed by its name, asking its question after `messages`
    (a field off a digit scale has none)."""
    return [
        prompting.choice_query(name, messages, prompt, hint, question, [(d, d) for d in options])
        for name, question in questions.items()
        if (options := digits(scales[name])) is not None
    ]


def read_numbers(outputs: Mapping[str, Output], scales: Mapping[str, Scale]) -> Numbers:
    """The numbers of a JSON answer (generate) or of the digits' probabilities (choice)."""
    if "answer" in outputs:
        found = parsing.answer_fields(outputs["answer"].text or "")
        missing = [name for name in scales if name not in found]
        if len(missing) == len(scales):
            raise InvalidAnswer(f"the answer has none of {', '.join(scales)}")
        return Numbers(
            values={n: parsing.bounded_number(found.get(n), *scales[n], n) for n in scales}
        )
    values: dict[str, float | None] = {}
    argmax: dict[str, float] = {}
    spreads: dict[str, dict[str, float]] = {}
    for name in scales:
        spread = dict(outputs[name].probabilities or {}) if name in outputs else {}
        if not spread:
            continue  # not asked: a scale of more than single digits has no choice form
        as_number = {key: float(key) for key in spread}
        values[name] = parsing.expected_value(spread, as_number)
        argmax[name] = float(parsing.most_probable(spread, {k: k for k in spread}))
        spreads[name] = spread
    return Numbers(values=values, argmax=argmax, probabilities=spreads)


def errors(
    gold: Mapping[str, float], scales: Mapping[str, Scale], predicted: Numbers | None
) -> dict[str, float]:
    """Absolute error per gold field; a missing prediction scores the scale's range."""
    out = {}
    for name, truth in gold.items():
        if predicted is not None and name not in predicted.values:
            continue  # not asked (in choice mode, a scale with no digit form)
        low, high = scales[name]
        guess = predicted.values.get(name) if predicted is not None else None
        out[f"{name}_abs_error"] = high - low if guess is None else abs(guess - truth)
    return out


def scored(
    gold: Mapping[str, float], scales: Mapping[str, Scale], predicted: Numbers | None
) -> Scored:
    found = errors(gold, scales, predicted)
    shares = [
        found[f"{n}_abs_error"] / (scales[n][1] - scales[n][0])
        for n in gold
        if f"{n}_abs_error" in found
    ]
    score = 1.0 - sum(shares) / len(shares) if shares else None
    return Scored(score, dict(found))


NumberOf = Callable[[View[Any, Any], str], tuple[float | None, float | None]]


def field_metrics(name: str, scale: Scale, pair: NumberOf) -> tuple[metrics.Metric, ...]:
    """MAE (missing: the range), coverage and Spearman's rho of one field."""
    span = scale[1] - scale[0]

    def covered(view: View[Any, Any]) -> float | None:
        guess, truth = pair(view, name)
        if truth is None or view.status == "failed":
            return None
        return float(guess is not None)

    return (
        metrics.column_metric(
            f"{name}_mae",
            f"mean absolute error of {name} (missing: {span:g})",
            metrics.Column(f"{name}_abs_error"),
            higher_is_better=False,
        ),
        metrics.mean_metric(
            f"{name}_coverage", f"share of items with an answer for {name}", covered
        ),
        metrics.spearman_metric(
            f"{name}_spearman",
            f"Spearman's rho of predicted and given {name}",
            lambda view: pair(view, name),
        ),
    )


def digit_rows(
    guess: Numbers | None, gold: Mapping[str, float]
) -> list[tuple[Mapping[str, float], str]]:
    """Per field answered by choice, its digits' probabilities and the given value's digit."""
    if guess is None:
        return []
    return [
        (spread, str(int(gold[name])))
        for name, spread in guess.probabilities.items()
        if name in gold and float(gold[name]).is_integer()
    ]
