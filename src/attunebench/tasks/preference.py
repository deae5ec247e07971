"""`preference`: predict which of two replies the participant preferred.

The pairs of `tasks.helpers.pairs` (recorded picks and ties, and pairs derived from ratings,
balanced so the preferred reply came earlier as often as later), each asked in both orders
(A/B with the first reply in the data as A, then B/A); prompts never name turns. `score` is
the mean correctness of the two orders: 0.5 for a position-driven answer (the same letter both
times). A constant or position-only answer scores 0.5 on a pair with a preferred reply and
"tie" everywhere the share of ties: the chance level is the larger. A pick asked again later
in the session is read as an answer given in both orders (`retests`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from itertools import combinations
from typing import Any

import numpy as np
from pydantic import Field

from attunebench import answerform, tasks
from attunebench.answerform import TaskHint
from attunebench.data.schema import Conversation, Probe, Turn
from attunebench.frozen import Frozen
from attunebench.prompts import delimit
from attunebench.tasks.helpers import history, metrics, pair_cues, prompting
from attunebench.tasks.helpers.pairs import (
    DEFAULT_DERIVED_CAP,
    TIE,
    Pair,
    PairGold,
    PairOptions,
    chosen_reply,
    flagged_left_out,
    preference_pairs,
)
from attunebench.tasks.helpers.parsing import parse_choice

TASK = "preference"
SAME_TURN = tasks.task_prompt(__name__, "preference")
ACROSS_TURNS = tasks.task_prompt(__name__, "preference-across-turns")
CHOICE = tasks.task_prompt(__name__, "preference-choice")
ORDERS = ("ab", "ba")
CHOICE_OPTIONS = [(option, CHOICE.text(option)) for option in ("A", "B", "tie")]
CHOICE_KEYS = prompting.option_keys(CHOICE_OPTIONS)  # each pick's key in the choice question


PICKS = ("A", "B", "tie")


class PreferenceAnswers(answerform.PairAnswers):
    """`{"choice": "A" | "B" | "tie"}`, from a hint carrying the replies as `candidates`."""

    kind = TASK
    marker = '{"choice"'

    def example(self, hint: TaskHint) -> str:
        return answerform.dumps({"choice": "A"})

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        return answerform.dumps({"choice": "AB"[int(rng.integers(2))]})

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        return answerform.dumps({"choice": answerform.gold_pick(hint, gold, right)})

    def schema(self, hint: TaskHint) -> answerform.Schema:
        return answerform.obj({"choice": answerform.one_of(PICKS)})


ANSWERS = answerform.registered(PreferenceAnswers())


class PreferencePrediction(Frozen):
    """The reply each order named (or "tie"), the letters, and (choice) their probabilities."""

    ab: str | None = None
    ba: str | None = None
    ab_letter: str | None = None
    ba_letter: str | None = None
    probabilities: dict[str, dict[str, float]] = Field(default_factory=dict)

    def pick(self, order: str) -> str | None:
        return self.ab if order == "ab" else self.ba


def shown(gold: PairGold, order: str) -> tuple[str, str]:
    """The candidate keys shown as (A, B) in an order: "ab" shows the first in the data as A."""
    return (gold.first, gold.second) if order == "ab" else (gold.second, gold.first)


def shown_gold(gold: PairGold, order: str) -> str:
    """The gold as the option shown in an order: "A", "B" or "tie"."""
    if gold.tie:
        return TIE
    return "A" if gold.chosen == shown(gold, order)[0] else "B"


def both_orders(pick_ab: str | None, pick_ba: str | None, gold: str) -> tasks.Scored:
    """One pair asked as A/B and as B/A: the mean correctness of the orders, with each order's
    correctness and their consistency."""
    return _both_orders(pick_ab == gold, pick_ba == gold, pick_ab == pick_ba)


@cache  # eight outcomes: each (frozen) score made once, shared by the pairs scored so
def _both_orders(right_ab: bool, right_ba: bool, consistent: bool) -> tasks.Scored:
    correct_ab, correct_ba = float(right_ab), float(right_ba)
    values = {"correct_ab": correct_ab, "correct_ba": correct_ba}
    return tasks.Scored((correct_ab + correct_ba) / 2, {**values, "consistent": float(consistent)})


def pair_of(item: tasks.Item[PairGold], options: PairOptions) -> Pair:
    for pair in preference_pairs(item.conversation, options):
        if (pair.turn_index, pair.item_id) == (item.turn_index, item.item_id):
            return pair
    raise KeyError(f"no reply pair {item.item_id!r} at turn {item.turn_index}")


PreferenceView = tasks.View[PairGold, PreferencePrediction]


def pair_calibration_rows(view: PreferenceView) -> list[tuple[Mapping[str, float], str]]:
    """Per order with probabilities, those of the first reply, the second and a tie (the
    data's order, so both orders' rows read alike), and the gold among them."""
    guess, gold = view.prediction, view.gold
    if guess is None:
        return []
    truth = "tie" if gold.key == TIE else ("first" if gold.key == gold.first else "second")
    rows: list[tuple[Mapping[str, float], str]] = []
    for order, spread in guess.probabilities.items():
        a, b = ("first", "second") if order == "ab" else ("second", "first")
        rows.append(({a: spread["A"], b: spread["B"], "tie": spread.get("tie", 0.0)}, truth))
    return rows


class PairScoring(tasks.Scoring[PairGold, PreferencePrediction]):
    """What `preference` and `judge_audit` read alike: each choice answer's distributions."""

    calibration_rows = staticmethod(pair_calibration_rows)


class PairTask(tasks.Task[PairGold, PreferencePrediction]):
    """What `preference` and `judge_audit` share: pairs asked in both orders."""

    gold_fields = ("preference", "rating")
    answer_modes = ("generate", "choice")
    per_order = "correct"  # the per-order values are `<per_order>_ab` and `<per_order>_ba`

    def __init__(self, context: str, pairs: PairOptions) -> None:
        super().__init__(context)
        self.pairs = pairs

    def items(self, conversations: Iterable[Conversation]) -> Iterator[tasks.Item[PairGold]]:
        for conversation in conversations:
            for pair in preference_pairs(conversation, self.pairs):
                yield from tasks.in_contexts(
                    self, conversation, pair.turn_index, pair.item_id, pair.gold()
                )

    def left_out(self, conversations: Sequence[Conversation]) -> dict[str, int]:
        return flagged_left_out(conversations, self.pairs)

    def in_orders(self, item: tasks.Item[PairGold]) -> tuple[Pair, int, dict[str, tuple[str, str]]]:
        """An item's pair, the turn its transcript ends at, and the replies shown as (A, B) in
        each order. The transcript stops before the earlier reply: quoting it (and going on to
        the later one's message) would show which reply came first and how far apart they were."""
        pair = pair_of(item, self.pairs)
        texts = {pair.first.key: pair.first.text, pair.second.key: pair.second.text}
        a_b = {order: shown(item.gold, order) for order in ORDERS}
        replies = {order: (texts[a], texts[b]) for order, (a, b) in a_b.items()}
        return pair, min(pair.first.turn_index, pair.second.turn_index), replies

    def letter(self, text: str) -> str:
        """The letter a generated answer names ("A", "B" or "tie"); raises InvalidAnswer."""
        return parse_choice(text)

    def parse(
        self, item: tasks.Item[PairGold], outputs: Mapping[str, tasks.Output]
    ) -> PreferencePrediction:
        """Each order's pick; raises InvalidAnswer (keeping the parsed orders) if one fails."""
        letters: dict[str, str] = {}
        spreads: dict[str, dict[str, float]] = {}
        problems = []
        for order in ORDERS:
            output = outputs[order]
            if output.probabilities is not None:
                spread = dict(output.probabilities)
                spreads[order] = {label: spread.get(key, 0.0) for label, key in CHOICE_KEYS.items()}
                letters[order] = max(spreads[order], key=lambda k: spreads[order][k])
                continue
            try:
                letters[order] = self.letter(output.text or "")
            except tasks.InvalidAnswer as invalid:
                problems.append(f"{order}: {invalid}")
        # the candidate key each letter names ("tie" stays "tie")
        picks = {
            o: dict(zip("AB", shown(item.gold, o), strict=True)).get(x, TIE)
            for o, x in letters.items()
        }
        prediction = PreferencePrediction(
            ab=picks.get("ab"),
            ba=picks.get("ba"),
            ab_letter=letters.get("ab"),
            ba_letter=letters.get("ba"),
            probabilities=spreads,
        )
        if problems:
            raise tasks.InvalidAnswer("; ".join(problems), partial=prediction)
        return prediction

    def worst(
        self, item: tasks.Item[PairGold], partial: PreferencePrediction | None
    ) -> tasks.Scored:
        """Score 0; an order that parsed keeps its own value."""
        values: dict[str, float | None] = {"consistent": None}
        for order in ORDERS:
            pick = partial.pick(order) if partial is not None else None
            values[f"{self.per_order}_{order}"] = (
                None if pick is None else float(pick == item.gold.key)
            )
        return tasks.Scored(0.0, values)


def asked_again(probe: Probe, pairs: Sequence[Pair]) -> Iterator[tuple[Pair, str]]:
    """The recorded picks' pairs a pick asked again is about, with the key it names."""
    again = probe.preference
    key = None if again is None else (TIE if again.tie else again.chosen)
    for pair in pairs:
        same_turn = not pair.derived and not pair.across_turns and pair.turn_index == probe.turn
        if key is not None and same_turn and key in (TIE, pair.first.key, pair.second.key):
            yield pair, key


_pair_guess = cache(PreferencePrediction)  # one (frozen) guess per picks, shared by its pairs


def picks(cue: pair_cues.Cue) -> tasks.Reference[PairGold]:
    """A reference picking the key a cue names at each pair (None: no guess)."""

    def guessed(fitted: Any, golds: Sequence[PairGold]) -> list[tasks.Guess]:
        out: list[tasks.Guess] = []
        for key, gold in zip(cue.pick(fitted, golds), golds, strict=True):
            if key is None:
                out.append(None)
                continue
            # A cue that cannot tell the replies apart has no preference: it answers "A" in
            # both orders (half right on a pair with a preferred reply), never "tie".
            ab, ba = (gold.first, gold.second) if key == TIE else (key, key)
            out.append((_pair_guess(ab=ab, ba=ba), both_orders(ab, ba, gold.key)))
        return out

    return tasks.Reference(guessed, cue.fit)


POSITION_CUES: dict[str, pair_cues.Cue] = {
    "reference/later-reply": pair_cues.later,
    "reference/earlier-reply": pair_cues.earlier,
    "reference/distance": pair_cues.by_distance,
    "reference/visible-position-classifier": pair_cues.position_classifier,
}
CONTENT_CUES: dict[str, pair_cues.Cue] = {
    "reference/longer-reply": pair_cues.longer,
    "reference/more-questions": pair_cues.more("questions"),
    "reference/more-overlap": pair_cues.more("overlap"),
}


def flip(view: PreferenceView) -> float | None:
    guess = view.prediction
    if view.status == "failed" or guess is None or guess.ab is None or guess.ba is None:
        return None
    return float(guess.ab != guess.ba)


def first_shown_pick(view: PreferenceView) -> list[float]:
    """For each order's non-tie pick: 1 when it named the reply shown first (A)."""
    guess = view.prediction
    if view.status == "failed" or guess is None:
        return []
    return [
        float(letter == "A")
        for letter in (guess.ab_letter, guess.ba_letter)
        if letter in ("A", "B")
    ]


def first_shown_probability(view: PreferenceView) -> float | None:
    """The probability given to the reply shown first, averaged over the orders (choice)."""
    spreads = view.prediction.probabilities if view.prediction is not None else {}
    shares = [s["A"] / (s["A"] + s["B"]) for s in spreads.values() if s["A"] + s["B"] > 0]
    return sum(shares) / len(shares) if shares else None


class PreferenceScoring(PairScoring):
    task: PreferenceTask

    headline = "accuracy in both orders (0.5 when inconsistent)"
    # The pick usual where the replies sit, learnt (cross-validated) from their positions.
    crowd = "reference/visible-position-classifier"

    def references(
        self, context: history.ContextMode = "blind"
    ) -> dict[str, tasks.Reference[PairGold]]:
        """What position alone achieves, and content cues (`tasks.helpers.pair_cues`)."""
        return {name: picks(cue) for name, cue in {**POSITION_CUES, **CONTENT_CUES}.items()}

    def answered_gold(self, gold: PairGold, prediction: PreferencePrediction) -> PairGold | None:
        """The reply named in both orders (or a tie in both); None for picks that follow the
        order shown."""
        picks = {prediction.ab, prediction.ba}
        if len(picks) != 1 or None in picks:
            return None
        pick = picks.pop()
        tie = pick == TIE
        return gold.model_copy(
            update={"chosen": None if tie else pick, "tie": tie, "strength": None}
        )

    def choice_gold(self, item: tasks.Item[PairGold], query: tasks.Query) -> str | None:
        return shown_gold(item.gold, query.key)

    def retests(
        self, conversations: Iterable[Conversation]
    ) -> Iterator[tasks.Repeat[PairGold, PreferencePrediction]]:
        for conversation in conversations:
            if not conversation.probes:
                continue
            pairs = preference_pairs(conversation, self.task.pairs)
            for probe in conversation.probes:
                for pair, key in asked_again(probe, pairs):
                    gold = pair.gold()
                    item = next(
                        tasks.in_contexts(
                            self.task, conversation, pair.turn_index, pair.item_id, gold
                        )
                    )
                    yield tasks.Repeat(item, PreferencePrediction(ab=key, ba=key))

    def chance(self, golds: Sequence[PairGold]) -> float | None:
        """Within each corpus part, the larger of its tie share and half the rest, averaged."""

        def larger(group: list[PairGold]) -> float:
            ties = sum(gold.key == TIE for gold in group) / len(group)
            return max(ties, (1.0 - ties) / 2.0)

        return tasks.chance_by_part(golds, larger)

    metrics = metrics.register(
        TASK,
        metrics.column_metric("score", headline),
        metrics.column_metric(
            "consistency",
            "share of parsed pairs given the same pick in both orders",
            metrics.Column("consistent", parsed_only=True),
        ),
        metrics.mean_metric(
            "flip_rate",
            "share of pairs whose pick changed with the order",
            flip,
            higher_is_better=False,
        ),
        metrics.Metric(
            "first_shown_share",
            "share of non-tie picks naming the reply shown first (0.5: no position bias)",
            lambda views: metrics.expanded(views, first_shown_pick, answer_only=True),
            metrics.mean_statistic,
        ),
        metrics.mean_metric(
            "first_shown_probability",
            "mean probability given to the reply shown first (choice mode; 0.5: no position bias)",
            first_shown_probability,
        ),
        *tasks.calibration_metrics(pair_calibration_rows, positive="first"),
    )


GOLD_COUNTS = (
    "turns_with_pick",
    "picks",
    "ties",
    "rating_pairs_within_turns",
    "turns_with_rating_pairs",
    "conversations_with_rating_pairs",
)


def _turn_gold(turn: Turn) -> dict[str, int]:
    """A turn's recorded pick or tie among two or more replies, and its pairs of replies whose
    ratings differ."""
    chosen = chosen_reply(turn)
    tie = turn.preference is not None and turn.preference.tie
    picked = (chosen is not None or tie) and len(turn.responses) >= 2
    ratings = [r.rating for r in turn.responses if r.rating is not None]
    pairs = sum(1 for a, b in combinations(ratings, 2) if a != b)
    return {
        "turns_with_pick": picked,
        "picks": picked and chosen is not None,
        "ties": picked and tie,
        "rating_pairs_within_turns": pairs,
        "turns_with_rating_pairs": pairs > 0,
    }


@tasks.register_task(TASK)
class PreferenceTask(PairTask, scoring=PreferenceScoring):
    """Preference prediction in both orders; pairs from picks, and from ratings where needed."""

    name = TASK
    subject_forms = (ANSWERS,)
    templates = (SAME_TURN, ACROSS_TURNS, CHOICE)

    def __init__(
        self,
        context: str = history.DEFAULT_CONTEXT,
        derive_from_ratings: bool = True,
        max_derived_pairs: int = DEFAULT_DERIVED_CAP,
        include_flagged: bool = False,
        seed: int = 0,
    ) -> None:
        options = PairOptions(derive_from_ratings, max_derived_pairs, seed, include_flagged)
        super().__init__(context, options)

    def gold_counts(self, conversations: Iterable[Conversation]) -> tasks.GoldCounts:
        """Turns with a recorded pick or tie; apart, pairs of replies whose ratings differ."""
        counts: Counter[str] = Counter()
        for conversation in conversations:
            turns = conversation.turns
            rated = {r.rating for t in turns for r in t.responses if r.rating is not None}
            counts["conversations_with_rating_pairs"] += len(rated) > 1
            for turn in turns:
                counts.update(_turn_gold(turn))
        return tasks.GoldCounts(
            {name: counts[name] for name in GOLD_COUNTS},
            {
                TASK: (counts["turns_with_pick"], ("preference",)),
                "rating pairs": (counts["conversations_with_rating_pairs"], ("rating",)),
            },
        )

    def queries(self, item: tasks.Item[PairGold], mode: tasks.AnswerMode) -> list[tasks.Query]:
        """The pair in both orders, as preference questions."""
        pair, upto, replies = self.in_orders(item)
        conversation = item.conversation
        base = prompting.shown_fields(item, history.history_through(conversation, upto), upto)
        template = ACROSS_TURNS if pair.across_turns else SAME_TURN
        queries = []
        for order, (a, b) in replies.items():
            fields = {**base, "reply_a": delimit("reply_a", a), "reply_b": delimit("reply_b", b)}
            hint = TaskHint(
                text=history.turn_at(conversation, upto).user,
                candidates={"A": a, "B": b},
                history=history.hint_history(history.history_before(conversation, upto)),
                form=ANSWERS,
            )
            form = None
            if mode == "choice":
                # A derived pair's question: the user rated each reply alone, never picked one.
                asked = CHOICE.text("across_turns" if pair.across_turns else "same_turn")
                form = prompting.choice_form(CHOICE.render(**fields), asked, CHOICE_OPTIONS)
            messages = template.render(**fields)
            queries.append(tasks.Query(order, messages, template.info, hint=hint, choice=form))
        return queries

    def score(self, item: tasks.Item[PairGold], prediction: PreferencePrediction) -> tasks.Scored:
        return both_orders(prediction.ab or "", prediction.ba or "", item.gold.key)
