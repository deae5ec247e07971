"""Multiple-comparison correction."""

from __future__ import annotations

from collections.abc import Sequence


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (Holm 1979, Scand. J. Statist. 6(2):65-70).

    Missing p-values stay missing and do not count towards the family size.

    >>> holm([0.01, 0.04, 0.03, None])
    [0.03, 0.06, 0.06, None]
    """
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    family = len(present)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(present):
        running = max(running, min(1.0, (family - rank) * p))
        adjusted[index] = running
    return adjusted
