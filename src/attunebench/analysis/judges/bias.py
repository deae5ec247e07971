"""What sways each judge: the order replies are shown in, their length, and who wrote them.

`position` (verdicts that flip with the order), `first_shown_share`, `length_slope` (the
judge's win rate per doubling of a reply's length, beside the participants' own) and
`self_preference` (its win rate for its own model's or family's replies minus the
participants'); docs/report.md ("Can the judges be trusted?") defines each.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.frame import IntArray
from attunebench.analysis.judges.panel import Mask, audited, flips
from attunebench.analysis.judges.verdict_table import FIRST, NONE, SECOND, VerdictTable, win_for
from attunebench.analysis.schema import Estimate, JudgeBias, SelfPreference
from attunebench.analysis.sums import estimate, mean, slope, slope_columns
from attunebench.records import ModelInfo


def _length_slope(
    bootstrap: ClusterBootstrap, minimum: Minimum, table: VerdictTable, rows: Mask, picks: IntArray
) -> Estimate:
    """The win's slope on log2 of the length ratio, over `rows` of `picks` (judge's or truth)."""
    lengths, picks = table.lengths[rows], picks[rows]
    usable = (lengths > 0).all(axis=1) & (lengths[:, 0] != lengths[:, 1]) & (picks != NONE)
    x = np.log2(lengths[usable, 0] / np.maximum(lengths[usable, 1], 1.0))
    columns = slope_columns(x, win_for(picks[usable], FIRST))
    where, why = table.conversation[rows][usable], "no verdict between replies of different length"
    return estimate(bootstrap, minimum, columns, where, slope, why)


def relation(author: str, judge: ModelInfo, families: Mapping[str, str]) -> str | None:
    """`self`, `family` or None: how a reply's author stands to the judge."""
    if author in (judge.name, judge.spec):
        return "self"
    family = judge.family
    return "family" if family is not None and families.get(author) == family else None


def self_preference(
    table: VerdictTable,
    j: int,
    judge: ModelInfo,
    families: Mapping[str, str],
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
) -> list[SelfPreference]:
    mine = (table.judge == j) & table.audit_like_response()
    authors = {a for row in np.flatnonzero(mine) for a in table.authors[row] if a is not None}
    out = []
    for author in sorted(authors):
        related = relation(author, judge, families)
        if related is None:
            continue
        judged, people, where, _ = audited(table, author, j)
        bias = mean(bootstrap, minimum, judged - people, where, "no audit pair with its reply")
        out.append(
            SelfPreference(
                model=author,
                relation=related,
                bias=bias,
                judge_win_rate=float(judged.mean()) if len(judged) else None,
                participant_win_rate=float(people.mean()) if len(people) else None,
                n=len(judged),
                n_conversations=int(np.unique(where).size),
                statement=_statement(judge.name or judge.spec, author, related, bias, len(judged)),
            )
        )
    return out


def _statement(judge: str, author: str, related: str, bias: Estimate, n: int) -> str | None:
    if bias.value is None or bias.ci_low is None or bias.ci_high is None:
        return None
    if bias.ci_low <= 0.0 <= bias.ci_high:
        return None
    way = "above" if bias.value > 0 else "below"
    whose = "its own model" if related == "self" else "a model of its family"
    return (
        f"{judge} gives {author} ({whose}) a win rate {abs(bias.value):.2f} {way} the "
        f"participants' own on the same {n} pairs (interval {bias.ci_low:+.2f} to "
        f"{bias.ci_high:+.2f}); do not let it judge {author} alone."
    )


def judge_bias(
    table: VerdictTable,
    roster: Mapping[str, ModelInfo],
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
) -> dict[str, JudgeBias]:
    families = {
        key: info.family
        for name, info in roster.items()
        if info.family is not None
        for key in (name, info.spec)
    }
    out = {}
    rate = partial(mean, bootstrap, minimum)
    for j, name in enumerate(table.judges):
        mine = table.judge == j
        flipped, where = flips(table, j)
        decisive = mine & ((table.pick == FIRST) | (table.pick == SECOND))
        shown_first = (table.pick[decisive] == FIRST) == (table.order[decisive] == 0)
        audit = mine & (table.truth != NONE) & (table.order == 0)
        info = roster.get(name) or ModelInfo(spec=name, name=name, role="judge")
        out[name] = JudgeBias(
            position=rate(flipped, where, "no comparison in both orders"),
            first_shown_share=rate(
                shown_first.astype(np.float64), table.conversation[decisive], "no decisive verdict"
            ),
            length_slope=_length_slope(bootstrap, minimum, table, mine, table.pick),
            participant_length_slope=_length_slope(bootstrap, minimum, table, audit, table.truth),
            self_preference=self_preference(table, j, info, families, bootstrap, minimum),
        )
    return out
