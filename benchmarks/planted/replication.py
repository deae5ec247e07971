"""Does a claim hold on two disjoint slices? One estimate (a paired difference, a person gap)
read on a first slice and on a second slice of other conversations chosen by the same rule.

A claim holds on a slice when that slice's interval lies wholly on one side of 0; an interval
that covers 0, or touches it, or is missing, does not hold. The claim's direction is the side
on which the first slice holds (the claim as first reported), or, where the first does not
hold, the side on which the second does. So a claim holds on both slices only where both
intervals exclude 0 on the same side; a second interval wholly on the other side is a reversal,
not a replication. A claim not asked on the second slice is "first slice only", and says
whether it holds there.

The ladder (`benchmarks/ladder.py`) reads the family pair's order and each person gap this way.
"""

from __future__ import annotations

from dataclasses import dataclass

Interval = tuple[float | None, float | None]  # (ci_low, ci_high), None where not estimated

BOTH, FIRST, SECOND, NEITHER = "both", "first", "second", "neither"
FIRST_ONLY = "first slice only"


def side(interval: Interval | None) -> int:
    """+1 where the interval lies wholly above 0, -1 wholly below, 0 otherwise (covering or
    touching 0, or not estimated).

    >>> side((0.05, 0.3)), side((-0.3, -0.01)), side((-0.1, 0.2)), side((0.0, 0.2))
    (1, -1, 0, 0)
    """
    low, high = interval if interval is not None else (None, None)
    if low is None or high is None:
        return 0
    return 1 if low > 0.0 else -1 if high < 0.0 else 0


@dataclass(frozen=True)
class Replication:
    """Where a claim holds: `holds` is "both", "first", "second", "neither" or "first slice
    only" (not asked on the second slice; `on_first` says whether it holds there). `direction`
    is the claim's side of 0 (0: it holds on neither); `reversed` marks a second slice that
    holds on the other side."""

    holds: str
    direction: int
    on_first: bool
    on_second: bool | None
    reversed: bool = False

    def sentence(self) -> str:
        """The verdict in words, as the results page prints it."""
        if self.holds == FIRST_ONLY:
            found = "holds" if self.on_first else "does not hold"
            return f"first slice only (not asked on the second), where it {found}"
        if self.holds == BOTH:
            return "holds on both slices"
        if self.holds == NEITHER:
            return "holds on neither slice"
        said = f"holds on the {self.holds} slice only"
        return f"{said}, reversed on the second" if self.reversed else said


def replication(first: Interval | None, second: Interval | None, asked: bool = True) -> Replication:
    """The verdict for one claim from its interval on each slice (`asked` False: the claim
    was not asked on the second slice, whatever `second` holds).

    >>> replication((0.07, 0.32), (0.06, 0.30)).holds
    'both'
    >>> replication((0.07, 0.32), (-0.05, 0.30)).holds
    'first'
    >>> replication((-0.35, -0.05), None, asked=False).sentence()
    'first slice only (not asked on the second), where it holds'
    """
    one = side(first)
    if not asked:
        return Replication(FIRST_ONLY, one, one != 0, None)
    two = side(second)
    direction = one or two
    on_first, on_second = direction != 0 and one == direction, direction != 0 and two == direction
    holds = {
        (True, True): BOTH,
        (True, False): FIRST,
        (False, True): SECOND,
        (False, False): NEITHER,
    }[(on_first, on_second)]
    return Replication(holds, direction, on_first, on_second, reversed=one * two < 0)
