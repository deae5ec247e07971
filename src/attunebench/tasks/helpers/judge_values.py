"""A response's values from its judges' verdicts: per judge, and the panel's.

Pairwise: a verdict scores the model 1 (win), 0.5 (tie) or 0 (loss or unusable: a judge that
fails on the items a model would lose must not raise its score); the panel takes its judges'
majority in each order. Rubric: a judge's mean score (unusable: 1), and their mean.
"""

from __future__ import annotations

from collections.abc import Sequence

from attunebench.tasks.base import JudgedVerdict

COMPARISONS = ("vs_chosen", "vs_rejected")
MODEL_FIRST, REFERENCE_FIRST = "model-first", "reference-first"


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def win(verdict: JudgedVerdict) -> float:
    """The model's result in one pairwise verdict: 1 win, 0.5 tie, 0 loss or unusable."""
    parsed = verdict.verdict.parsed if verdict.verdict.status == "ok" else None
    if parsed is None:
        return 0.0
    mine = "A" if verdict.query.key.split("@")[0].endswith(MODEL_FIRST) else "B"
    winner = parsed.get("winner")
    return 0.5 if winner == "tie" else float(winner == mine)


def judge_values(
    verdicts: Sequence[JudgedVerdict], judges: Sequence[str], mode: str
) -> tuple[dict[str, float | None], bool]:
    """Per-judge and ensemble values, and whether some comparison lost an order."""
    values: dict[str, float | None] = {}
    one_order = False
    for judge in judges:
        mine = [v for v in verdicts if v.query.model == judge]
        for comparison in COMPARISONS if mode != "rubric" else ():
            asked = [v for v in mine if v.query.key.startswith(comparison)]
            one_order |= sum(v.verdict.status == "ok" for v in asked) == 1
            values[f"win_{comparison}[{judge}]"] = mean([win(v) for v in asked])
        if mode != "pairwise":
            rubric = [v for v in mine if v.verdict.mode == "rubric"]
            values[f"rubric[{judge}]"] = mean(
                [
                    float((v.verdict.parsed or {}).get("score", 1.0))
                    if v.verdict.status == "ok"
                    else 1.0
                    for v in rubric
                ]
            )
    for comparison in COMPARISONS if mode != "rubric" else ():
        values[f"win_{comparison}"] = panel_win(
            [v for v in verdicts if v.query.key.startswith(comparison)]
        )
    if mode != "pairwise":
        values["rubric"] = mean([v for j in judges if (v := values[f"rubric[{j}]"]) is not None])
    return values, one_order


def majority(wins: Sequence[float]) -> float:
    """The panel's verdict from its judges' (1 win, 0.5 tie, 0 loss): the result most judges
    gave; 0.5 when no result has more votes than each other (a split panel)."""
    votes = {result: sum(w == result for w in wins) for result in (1.0, 0.5, 0.0)}
    top = max(votes.values())
    leaders = [result for result, count in votes.items() if count == top]
    return leaders[0] if len(leaders) == 1 else 0.5


def panel_win(verdicts: Sequence[JudgedVerdict]) -> float | None:
    """The panel's win rate in one comparison: its majority in each order, averaged."""
    by_order: dict[str, list[float]] = {}
    for verdict in verdicts:
        by_order.setdefault(verdict.query.key.split("@")[0], []).append(win(verdict))
    return mean([majority(wins) for wins in by_order.values()])
