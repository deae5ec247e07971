"""A claim read on two disjoint slices: planted intervals with a known verdict each, and the
traps (an interval covering or touching 0, one on the other side, one missing) that must not
count as holding."""

from __future__ import annotations

import pytest

from planted.replication import Interval, replication, side

ABOVE, ABOVE_TOO = (0.073, 0.317), (0.058, 0.297)  # the 1.5B - 0.5B emotion figures
BELOW = (-0.346, -0.049)
COVERS = (-0.02, 0.21)


@pytest.mark.parametrize(
    ("first", "second", "holds", "direction"),
    [
        (ABOVE, ABOVE_TOO, "both", 1),
        (BELOW, (-0.2, -0.01), "both", -1),
        (ABOVE, COVERS, "first", 1),
        (COVERS, ABOVE, "second", 1),
        (COVERS, BELOW, "second", -1),
        (COVERS, (-0.3, 0.1), "neither", 0),
        ((None, None), (None, None), "neither", 0),
    ],
)
def test_a_claim_holds_where_its_interval_excludes_0_on_its_side(
    first: Interval, second: Interval, holds: str, direction: int
) -> None:
    found = replication(first, second)
    assert (found.holds, found.direction) == (holds, direction)
    assert found.on_first == (holds in ("both", "first"))
    assert found.on_second == (holds in ("both", "second"))


@pytest.mark.parametrize("second", [COVERS, (0.0, 0.3), (-0.2, 0.0), (None, 0.3), None])
def test_an_interval_covering_or_touching_0_or_missing_does_not_hold(
    second: Interval | None,
) -> None:
    assert side(second) == 0
    found = replication(ABOVE, second)
    assert (found.holds, found.on_second, found.reversed) == ("first", False, False)
    assert found.sentence() == "holds on the first slice only"


def test_a_reversal_is_not_a_replication() -> None:
    """Both intervals exclude 0, on opposite sides: the first slice's claim holds there alone
    and the page says the second reversed it."""
    found = replication(ABOVE, BELOW)
    assert (found.holds, found.direction, found.reversed) == ("first", 1, True)
    assert found.sentence() == "holds on the first slice only, reversed on the second"
    assert replication(BELOW, ABOVE).direction == -1  # the first slice names the claim


def test_a_claim_not_asked_on_the_second_slice_is_first_slice_only() -> None:
    """Outcome is not asked on the second slice: whatever its second figure, the verdict is
    first slice only, and says whether the claim holds on the first."""
    held = replication(BELOW, ABOVE_TOO, asked=False)
    assert (held.holds, held.on_first, held.on_second) == ("first slice only", True, None)
    assert held.sentence().endswith(", where it holds")
    not_held = replication(COVERS, None, asked=False)
    assert (not_held.holds, not_held.on_first) == ("first slice only", False)
    assert not_held.sentence().endswith(", where it does not hold")


def test_the_sentences_name_each_verdict() -> None:
    assert replication(ABOVE, ABOVE_TOO).sentence() == "holds on both slices"
    assert replication(COVERS, ABOVE).sentence() == "holds on the second slice only"
    assert replication(COVERS, COVERS).sentence() == "holds on neither slice"
