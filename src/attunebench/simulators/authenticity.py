"""Can the simulated person's messages be told from the real person's? The realism AUROC.

Each simulated message is paired with the person's at that point; a classifier (`classifier`)
cross-fitted over whole conversations scores each, and the AUROC of simulated against real
gets a cluster-bootstrap interval. 0.5: indistinguishable. A classifier fitted on the messages
it scores would separate even two samples of the same people.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from attunebench.analysis.resampled import Resampler
from attunebench.simulators import classifier
from attunebench.simulators.records import Written
from attunebench.simulators.schema import Auroc
from attunebench.tasks.helpers.calibration import auroc_statistic

NO_MESSAGES = "the simulator wrote no message (no conversation to continue or play)"


def usable(messages: Sequence[Written]) -> list[Written]:
    """The messages that came back (a failed or empty one is counted elsewhere: a blank
    continuation is an error of its `Continued`, not of the message)."""
    return [m for m in messages if m.error is None and (m.text or "").strip()]


def realism_auroc(messages: Sequence[Written], resampler: Resampler) -> Auroc:
    """The AUROC of simulated against real messages (see the module docstring)."""
    simulated = usable(messages)
    if not simulated:
        return Auroc(reason=NO_MESSAGES)
    if not classifier.available():
        return Auroc(reason=classifier.NEEDS)
    real = list({(m.conversation_id, m.turn_index): m for m in simulated}.values())
    texts = [m.text or "" for m in simulated] + [m.real for m in real]
    labels = [1] * len(simulated) + [0] * len(real)
    ids = [m.conversation_id for m in (*simulated, *real)]
    base = Auroc(
        n_simulated=len(simulated),
        n_real=len(real),
        n_conversations=len(set(ids)),
        classifier=classifier.DESCRIPTION,
    )
    scored = classifier.cross_fitted(texts, labels, ids)
    if scored is None:
        return base.model_copy(update={"reason": "fewer than 2 conversations to cross-fit on"})
    values = np.column_stack([scored, np.asarray(labels, dtype=np.float64)])
    found = resampler.statistic(ids, partial(auroc_statistic, values))
    return base.model_copy(update=resampler.estimate(found).model_dump())
