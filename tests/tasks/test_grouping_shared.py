"""A task's trivial references share what each gold shows and each train set's constants
(`grouping.group_references`): their guesses are those each reference makes on its own, and
the shared work is done once, never across train sets that differ."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Sequence

from attunebench.frozen import Frozen
from attunebench.tasks.base import Gold, Guess, Reference, Scored
from attunebench.tasks.helpers.fitting import cross_fitted
from attunebench.tasks.helpers.grouping import (
    Grouped,
    Shown,
    group_references,
    grouped_reference,
    quintile_edges,
    remembered,
    shared_constants,
)


class Answer(Frozen):
    answer: str


class Planted(Gold):
    shown_messages: int
    chars: int
    label: str
    reported: str | None = None


CALLS: Counter[str] = Counter()


def what_shows(gold: Planted) -> Shown:
    CALLS[f"shown {id(gold)}"] += 1
    return Shown(gold.shown_messages, gold.chars, gold.reported)


def usual(golds: Sequence[Planted], constant: bool) -> str:
    """A group's most usual label; a constant's names its train items, so a constant shared
    across train sets that differ would show."""
    if constant:
        CALLS["constant"] += 1
        return "|".join(sorted(g.label + str(g.chars) for g in golds))
    return Counter(g.label for g in golds).most_common(1)[0][0]


def guess(found: str, gold: Planted) -> Guess:
    return Answer(answer=found), Scored(None)


GROUPED = Grouped(usual, guess)


def planted(items: int = 60) -> tuple[list[Planted], list[str]]:
    golds = [
        Planted(
            shown_messages=i % 4,
            chars=7 * i % 53,
            label="sad" if (i % 4) < 2 else "calm",
            reported=None if i % 3 else "sad|2",
            part=("a", "b", None)[i % 3] if i % 5 else "c",
        )
        for i in range(items)
    ]
    return golds, [f"conv-{i // 3}" for i in range(items)]


def answers(guesses: list[Guess]) -> list[str]:
    return [g[0].model_dump()["answer"] if g else "" for g in guesses]


def test_shared_references_guess_as_each_alone_and_share_the_constants_per_fold() -> None:
    golds, conversations = planted()
    CALLS.clear()
    shared = group_references(GROUPED, what_shows, "informed")
    together = {
        name: answers(cross_fitted(reference, golds, conversations, seed=3).guesses)
        for name, reference in shared.items()
    }
    made, shown = CALLS["constant"], [k for k in CALLS if k.startswith("shown")]
    # each gold's shown read once for the three references that group by it, over 5 folds
    assert len(shown) == len(golds) and all(CALLS[k] == 1 for k in shown)
    # the constants: the pooled one and each part's (4 parts), once per fold's train set
    assert made == 5 * (1 + 4)
    for name in shared:
        alone = group_references(GROUPED, what_shows, "informed")[name]
        assert answers(cross_fitted(alone, golds, conversations, seed=3).guesses) == together[name]
    assert len(set(together["reference/constant"])) > 1  # the folds' constants differ


def test_a_train_set_of_other_golds_or_order_gets_constants_of_its_own() -> None:
    golds, _ = planted(20)
    reference = group_references(GROUPED, what_shows)["reference/constant"]
    assert reference.fit is not None
    first = reference.fit(golds[:10])
    CALLS.clear()
    assert reference.fit(list(golds[:10])) is first  # the same golds, in a list of its own
    assert CALLS["constant"] == 0
    # equal golds that are other objects, the same golds in another order, and other golds
    # each get constants of their own, equal where the golds are
    copies = [g.model_copy() for g in golds[:10]]
    assert reference.fit(copies) is not first and reference.fit(copies) == first
    assert reference.fit(golds[9::-1]) is not first
    other = reference.fit(golds[10:])
    assert other.pooled != first.pooled


def test_a_group_is_read_once_per_gold_and_binned_as_bisect_bins_it() -> None:
    golds, conversations = planted()
    # few lengths, so that the quintiles' edges fall on some of them
    golds = [g.model_copy(update={"chars": 10 * (i % 5)}) for i, g in enumerate(golds)]
    read: Counter[str] = Counter()

    def by(field: str) -> Callable[[Sequence[Planted]], list[tuple[str | None, int]]]:
        def reading(found: Sequence[Planted]) -> list[tuple[str | None, int]]:
            read[field] += len(found)
            return [(g.part, getattr(g, field)) for g in found]

        return remembered(reading)

    constants = shared_constants(GROUPED)
    fixed = grouped_reference(GROUPED, by("shown_messages"), constants)
    binned = grouped_reference(GROUPED, by("chars"), constants, binned=True)
    by_fixed = answers(cross_fitted(fixed, golds, conversations, seed=1).guesses)
    by_binned = cross_fitted(binned, golds, conversations, seed=1)
    # each gold read once, though fitted on in 4 folds and guessed in 1
    assert read == {"shown_messages": len(golds), "chars": len(golds)}
    # the planted truth: messages 0 and 1 are sad, 2 and 3 calm, in every fold
    assert by_fixed == ["sad" if g.shown_messages < 2 else "calm" for g in golds]
    # the trap: a length binned by numpy, not bisect, would put a length on an edge elsewhere
    folds, fit = by_binned.folds, binned.fit
    assert folds is not None and fit is not None
    for k in set(folds):
        train = [g for g, f in zip(golds, folds, strict=True) if f != k]
        edges = quintile_edges([g.chars for g in train])
        assert any(g.chars in edges for g in train)  # some lengths fall on an edge
        fitted = fit(train)
        assert fitted.usual == {
            group: usual(
                [g for g in train if (g.part, bisect_left(edges, g.chars)) == group], False
            )
            for group in {(g.part, bisect_left(edges, g.chars)) for g in train}
        }


def test_cross_fitted_guesses_come_back_in_the_items_order_from_fits_on_other_folds() -> None:
    # Planted: a reference whose fit notes the conversations it learnt from and whose guess
    # names the item it guesses; folds interleave across the items (dealt by conversation).
    # Known answer: each item's guess is its own, from a fit on none of its conversation's
    # items. A trap: the folds' guesses put back in fold order would name other items.
    golds, conversations = planted(45)
    of = {id(g): c for g, c in zip(golds, conversations, strict=True)}

    def fit(train: Sequence[Planted]) -> frozenset[str]:
        return frozenset(of[id(g)] for g in train)

    def guess(seen: frozenset[str], found: Sequence[Planted]) -> list[Guess]:
        return [(Answer(answer=f"{g.chars}|{of[id(g)] in seen}"), Scored(None)) for g in found]

    fitted = cross_fitted(Reference(guess, fit), golds, conversations, seed=2)
    assert fitted.folds is not None and len(set(fitted.folds)) == 5
    assert fitted.folds != sorted(fitted.folds)  # the folds interleave
    assert answers(fitted.guesses) == [f"{g.chars}|False" for g in golds]
    assert cross_fitted(Reference(guess, fit), [], [], seed=2).guesses == []  # no item


def test_a_remembered_reading_reads_only_golds_it_has_not_read() -> None:
    golds, _ = planted(12)
    read: list[int] = []

    def reading(found: Sequence[Planted]) -> list[int]:
        read.extend(g.chars for g in found)
        return [g.chars for g in found]

    remember = remembered(reading)
    assert remember(golds[:6]) == [g.chars for g in golds[:6]]
    assert remember(golds[3:0:-1]) == [g.chars for g in golds[3:0:-1]]  # none read anew
    assert len(read) == 6
    # a trap: golds read before mixed with new ones; only the new are read, each in place
    assert remember(golds[::-1]) == [g.chars for g in golds[::-1]]
    assert sorted(read) == sorted(g.chars for g in golds)
