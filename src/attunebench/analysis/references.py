"""Heuristic references scored beside the models: what position or length alone achieve.

A task declares its references (`Task.references`): each gives every item's score from the
gold alone ("always the later reply", "always the longer reply", "the rating usual at this
point of a conversation"). They are scored on the same items as the models, with the same
resamples, and shown as rows of kind `reference`, never ranked with the models under test.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import Frame
from attunebench.analysis.schema import ScoreRow
from attunebench.analysis.scores import HEADLINE
from attunebench.stats import none_if_nan


def reference_rows(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    cells: Mapping[tuple[str, str], Cell],
    headline_of: Mapping[str, str],
    minimum: Minimum,
) -> list[ScoreRow]:
    rows = []
    for (task, variant), cell in sorted(cells.items()):
        declaration = cell.declaration
        if declaration is None or not declaration.references():
            continue
        # Each item once (from whichever model's record), as its conversation is resampled.
        seen: dict[int, int] = {}
        kept = np.flatnonzero(cell.mask)
        for code, i in zip(frame.item[kept].tolist(), kept.tolist(), strict=True):
            seen.setdefault(code, i)
        records = list(seen.values())
        views = cell.views
        items = [(frame.records[i].conversation_id, views[i].gold) for i in records]
        conversations = frame.conversation[records]
        for name, reference in declaration.references().items():
            scores = np.array([np.nan if v is None else v for v in reference(items)], dtype=float)
            defined = ~np.isnan(scores)
            if not defined.any():
                continue
            point, samples = bootstrap.means(scores[defined], conversations[defined])
            low, high = bootstrap.interval(samples)
            n_conversations = int(np.unique(conversations[defined]).size)
            value = none_if_nan(point[0])
            too_few = minimum.of(conversations[defined])
            rows.append(
                ScoreRow(
                    model=name,
                    model_kind="reference",
                    task=task,
                    variant=variant,
                    metric=HEADLINE,
                    headline=headline_of.get(task) == variant,
                    value=value,
                    ci_low=None if too_few else none_if_nan(low[0]),
                    ci_high=None if too_few else none_if_nan(high[0]),
                    reason=too_few if value is not None else "undefined on these items",
                    n=int(defined.sum()),
                    n_conversations=n_conversations,
                    n_invalid=0,
                    n_failed=0,
                    subject=False,
                )
            )
    return rows
