"""Per-item scores shared by the tasks: set overlap, errors, and the both-orders rule.

Each function is small and pure so the hand-computed values in the tests pin it down.
"""

from __future__ import annotations

from collections.abc import Iterable

from attunebench.tasks.parsing import Choice


def f1(predicted: Iterable[str], gold: Iterable[str]) -> float:
    """F1 of two label sets; two empty sets agree perfectly (1.0).

    >>> f1(["a", "b"], ["b", "c"])
    0.5
    """
    p, g = set(predicted), set(gold)
    if not p and not g:
        return 1.0
    return 2 * len(p & g) / (len(p) + len(g))


def jaccard(predicted: Iterable[str], gold: Iterable[str]) -> float:
    """|P ∩ G| / |P ∪ G|; two empty sets agree perfectly (1.0).

    >>> round(jaccard(["a", "b"], ["b", "c"]), 3)
    0.333
    """
    p, g = set(predicted), set(gold)
    if not p and not g:
        return 1.0
    return len(p & g) / len(p | g)


def abs_error(predicted: float | None, gold: float | None) -> float | None:
    """|prediction - gold|, or None when either side has no number."""
    if predicted is None or gold is None:
        return None
    return abs(predicted - gold)


def pick_of(choice: Choice, a: str, b: str) -> str:
    """The candidate key a choice names ("tie" stays "tie")."""
    return {"A": a, "B": b}.get(choice, "tie")


def both_orders(pick_ab: str, pick_ba: str, gold: str) -> dict[str, float]:
    """Correctness per order and consistency of one pair asked as A/B and as B/A.

    `pick_*` and `gold` are candidate keys or "tie". The item score is the mean correctness of
    the two orders: 1.0 only for a consistent, correct answer; 0.5 for a position-driven
    answer (the same letter both times) or one correct order; 0.0 when neither order is right.
    """
    correct_ab = float(pick_ab == gold)
    correct_ba = float(pick_ba == gold)
    return {
        "correct_ab": correct_ab,
        "correct_ba": correct_ba,
        "consistent": float(pick_ab == pick_ba),
        "score": (correct_ab + correct_ba) / 2,
    }


def outcome(choice: Choice, mine: Choice) -> float:
    """1 when the judge picked `mine`, 0.5 for a tie, 0 when it picked the other."""
    if choice == "tie":
        return 0.5
    return 1.0 if choice == mine else 0.0
