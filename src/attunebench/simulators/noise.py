"""The noise floor: a figure's spread over rollouts with different seeds.

Two runs of one simulator on the same items differ by chance alone (sampling, a server's
nondeterminism); a difference between simulators, or from the people, smaller than that is
noise. Each figure is recomputed in every rollout; its standard deviation (n - 1) and its
range (max - min) are reported, and the range is the floor a difference must clear.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attunebench.simulators.schema import NoiseFloor


def noise_floor(values: Sequence[float | None], note: str | None = None) -> NoiseFloor:
    """The figure's values over rollouts (None where undefined), their SD and range.

    >>> noise_floor([0.5, 0.7, 0.6]).spread
    0.2
    """
    defined = np.array([v for v in values if v is not None and not np.isnan(v)], dtype=float)
    spread = round(float(defined.max() - defined.min()), 12) if len(defined) else None
    sd = float(defined.std(ddof=1)) if len(defined) > 1 else None
    return NoiseFloor(values=list(values), sd=sd, spread=spread, note=note)
