"""`preference`: predict which of two replies the participant preferred.

Construct: pairwise human preference prediction (as in reward-model and Chatbot-Arena style
evaluations), with the gold given by the person the replies were written for. The model sees
the conversation up to the user's message and two candidate replies, and answers A, B or tie.

Items: the pairs of `tasks.pairs`: recorded picks and ties, and where a corpus has ratings
instead, pairs derived from them (`meta.derived`, `meta.across_turns`; see that module).
Every pair is asked in both orders, A/B (the first reply in the data as A) and B/A.

Per item: `prediction` has the reply each order named ("ab", "ba": its key, or "tie") and
the letter the model wrote ("ab_letter", "ba_letter"). `scores.correct_ab` and
`scores.correct_ba` say whether each order named the gold (a gold tie is matched only by
"tie"); `scores.consistent` whether both orders named the same reply; `score` is their mean
correctness: 1.0 only for a consistent, correct answer, 0.5 for a position-driven one, 0.0
when neither order is right. An answer that does not parse in either order makes the record
invalid (score 0.0, `consistent` None: position consistency is measured on parsed answers
only). A failed call in either order makes it failed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from attunebench.data.schema import Conversation
from attunebench.data.taxonomy import taxonomy_of
from attunebench.judge.templates import PromptTemplate, delimit
from attunebench.models.base import Message
from attunebench.models.hints import HintKind, TaskHint
from attunebench.records import ItemRecord, PromptInfo
from attunebench.tasks import history as h
from attunebench.tasks import pairs as p
from attunebench.tasks.base import TASKS, Caller, CallResult, Item
from attunebench.tasks.common import JSON_PARAMS, failure_message, joined_raw, record
from attunebench.tasks.parsing import Choice, InvalidAnswer, parse_choice
from attunebench.tasks.prompting import self_reports_block, task_prompt, transcript, turn_label
from attunebench.tasks.scoring import both_orders, pick_of

TASK = "preference"
SAME_TURN = task_prompt("preference")
ACROSS_TURNS = task_prompt("preference-across-turns")
ORDERS = ("ab", "ba")


def ordered(pair: p.Pair, order: str) -> tuple[p.Candidate, p.Candidate]:
    """(A, B) for an order: "ab" shows the first reply in the data as A."""
    return (pair.first, pair.second) if order == "ab" else (pair.second, pair.first)


def pair_meta(pair: p.Pair) -> dict[str, Any]:
    return {
        "derived": pair.derived,
        "across_turns": pair.across_turns,
        "first": pair.first.key,
        "second": pair.second.key,
        **pair.length_meta(),
    }


def pair_gold(pair: p.Pair) -> dict[str, Any]:
    gold: dict[str, Any] = {"chosen": None if pair.gold == p.TIE else pair.gold}
    gold["tie"] = pair.gold == p.TIE
    if pair.strength is not None:
        gold["strength"] = pair.strength
    return gold


def pair_prompt(item: Item, pair: p.Pair, order: str) -> tuple[PromptTemplate, list[Message]]:
    conversation = item.conversation
    a, b = ordered(pair, order)
    mode: h.ContextMode = "informed" if item.variant == "informed" else "blind"
    fields = {
        "conversation": transcript(h.history_through(conversation, pair.turn_index)),
        "self_reports": self_reports_block(
            mode, h.self_reports_before(conversation, pair.turn_index)
        ),
        "reply_a": delimit("reply_a", a.text),
        "reply_b": delimit("reply_b", b.text),
    }
    if not pair.across_turns:
        return SAME_TURN, SAME_TURN.render(**fields)
    turns = {"turn_a": turn_label(a.turn_index), "turn_b": turn_label(b.turn_index)}
    return ACROSS_TURNS, ACROSS_TURNS.render(**fields, **turns)


async def ask(item: Item, pair: p.Pair, order: str, model: str, caller: Caller) -> CallResult:
    template, messages = pair_prompt(item, pair, order)
    a, b = ordered(pair, order)
    hint = TaskHint(
        kind="preference",
        text=h.turn_at(item.conversation, pair.turn_index).user,
        candidates={"A": a.text, "B": b.text},
        history=h.hint_history(h.history_before(item.conversation, pair.turn_index)),
        item_key=f"{item.key}|{order}",
    )
    return await caller.call(
        model, messages, prompt=template.info, item=item, params=JSON_PARAMS, hint=hint
    )


def parse_orders(texts: dict[str, str]) -> tuple[dict[str, Choice], list[str]]:
    """The parsed choice of every order that parses, and why the others did not."""
    choices: dict[str, Choice] = {}
    problems: list[str] = []
    for order, text in texts.items():
        try:
            choices[order] = parse_choice(text)
        except InvalidAnswer as invalid:
            problems.append(f"{order}: {invalid}")
    return choices, problems


@dataclass(frozen=True, slots=True)
class PreferenceTask:
    context: str = h.DEFAULT_CONTEXT
    derive_from_ratings: bool = True
    max_derived_pairs: int = p.DEFAULT_DERIVED_CAP
    name: str = field(default=TASK, init=False)
    subject_hints: ClassVar[frozenset[HintKind]] = frozenset({"preference"})

    @property
    def prompts(self) -> list[PromptInfo]:
        return [SAME_TURN.info, ACROSS_TURNS.info]

    @property
    def options(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "derive_from_ratings": self.derive_from_ratings,
            "max_derived_pairs": self.max_derived_pairs,
        }

    def pairs(self, conversation: Conversation) -> list[p.Pair]:
        return p.preference_pairs(
            conversation, derive=self.derive_from_ratings, cap=self.max_derived_pairs
        )

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item]:
        modes = h.context_modes(self.context)
        for conversation in conversations:
            taxonomy = taxonomy_of(conversation)
            for pair in self.pairs(conversation):
                for mode in modes:
                    yield Item(TASK, conversation, pair.turn_index, pair.item_id, taxonomy, mode)

    async def evaluate(
        self, item: Item, model: str, caller: Caller, judges: list[str]
    ) -> ItemRecord:
        pair = p.find_pair(self.pairs(item.conversation), item.turn_index, item.item_id)
        results = dict(zip(ORDERS, await asyncio.gather(
            *(ask(item, pair, order, model, caller) for order in ORDERS)
        ), strict=True))  # fmt: skip
        calls = list(results.values())
        common: dict[str, Any] = {"gold": pair_gold(pair), "meta": pair_meta(pair)}
        raw = joined_raw([(order, r.text) for order, r in results.items()])
        if not all(r.ok for r in calls):
            error = failure_message(list(results.items()))
            return record(item, model, "failed", calls, raw_output=raw, error=error, **common)
        choices, problems = parse_orders({o: r.text or "" for o, r in results.items()})
        picks = {o: pick_of(c, *(x.key for x in ordered(pair, o))) for o, c in choices.items()}
        prediction = {**picks, **{f"{o}_letter": letter for o, letter in choices.items()}}
        if problems:
            scores: dict[str, float | None] = {
                f"correct_{o}": float(picks[o] == pair.gold) if o in picks else None
                for o in ORDERS
            }
            return record(
                item, model, "invalid", calls, prediction=prediction, score=0.0,
                scores={**scores, "consistent": None}, raw_output=raw,
                error="; ".join(problems), **common,
            )  # fmt: skip
        outcome = both_orders(picks["ab"], picks["ba"], pair.gold)
        score = outcome.pop("score")
        return record(
            item, model, "ok", calls, prediction=prediction, score=score,
            scores=dict(outcome), raw_output=raw, **common,
        )  # fmt: skip


@TASKS.register(TASK)
def preference_task(
    context: str = h.DEFAULT_CONTEXT,
    derive_from_ratings: bool = True,
    max_derived_pairs: int = p.DEFAULT_DERIVED_CAP,
) -> PreferenceTask:
    """Preference prediction in both orders; pairs from picks, and from ratings where needed."""
    h.context_modes(context)
    if max_derived_pairs < 0:
        raise ValueError(f"max_derived_pairs must be >= 0 (got {max_derived_pairs})")
    return PreferenceTask(context, derive_from_ratings, max_derived_pairs)
