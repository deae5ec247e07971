"""`judge_audit`: the judge itself, run on the participants' own A/B pairs.

Construct: judge-human agreement, as MT-Bench measured it for its LLM judges, but against the
person the replies were written for. The "model" of this task is a judge: it sets
`evaluates = "judges"`, so an engine that honours `tasks.base.evaluated_models` runs it once
per `--judge` (with an engine that does not, each subject model is audited as a judge).

Items: the same pairs as `preference` (recorded picks and ties; pairs derived from ratings
where a corpus has only ratings), except pairs across turns: in the response task a judge only
ever compares two replies to the same message, and that is the use being audited. Each pair
goes to the judge's pairwise prompt in both orders. The judge is told what the participant
told us about the turn (state, wanted, wanted behaviors; `participant_context=False` drops it)
but never their pick, nor the two replies as references, since those are the candidates.

Per item: `prediction` has the reply each order's verdict named ("ab", "ba": its key, or
"tie") and the letter the judge wrote ("ab_letter", "ba_letter"),
`gold` the participant's pick, `meta` the lengths (`len_a`, `len_b`: the first and second reply
in the data; `longer`: "A", "B" or "equal") and `derived`. `score` is 1.0 when the judge is
consistent across orders and agrees with the participant, else 0.0; `scores` has agree_ab,
agree_ba and consistent. An unparseable verdict in either order makes the record invalid
(score 0.0). Accuracy, Cohen's kappa, flip rate and length preference are in `judge.audit`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from attunebench.data.schema import Conversation
from attunebench.data.taxonomy import taxonomy_of
from attunebench.judge.catalog import pairwise_prompt
from attunebench.models.hints import HintKind
from attunebench.records import ItemRecord, PromptInfo
from attunebench.tasks import history as h
from attunebench.tasks import pairs as p
from attunebench.tasks.base import TASKS, Caller, Item
from attunebench.tasks.common import failure_message, joined_raw, record
from attunebench.tasks.judging import JudgeContext, Profile, judge_pair, profile_of
from attunebench.tasks.parsing import PairwiseVerdict
from attunebench.tasks.preference import ORDERS, ordered, pair_gold, pair_meta
from attunebench.tasks.scoring import both_orders, pick_of

TASK = "judge_audit"


@dataclass(frozen=True, slots=True)
class JudgeAuditTask:
    derive_from_ratings: bool = True
    max_derived_pairs: int = p.DEFAULT_DERIVED_CAP
    participant_context: bool = True
    name: str = field(default=TASK, init=False)
    # The evaluated "models" are the judges, asked for pairwise verdicts: a judge that gives
    # none is left out of this task (not applicable), like a subject model elsewhere.
    subject_hints: ClassVar[frozenset[HintKind]] = frozenset({"judge_pairwise"})
    evaluates: str = field(default="judges", init=False)
    needs_judge: bool = field(default=True, init=False)

    @property
    def prompts(self) -> list[PromptInfo]:
        return [pairwise_prompt().info]

    @property
    def options(self) -> dict[str, Any]:
        return {
            "derive_from_ratings": self.derive_from_ratings,
            "max_derived_pairs": self.max_derived_pairs,
            "participant_context": self.participant_context,
        }

    def pairs(self, conversation: Conversation) -> list[p.Pair]:
        found = p.preference_pairs(
            conversation, derive=self.derive_from_ratings, cap=self.max_derived_pairs
        )
        return [pair for pair in found if not pair.across_turns]

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item]:
        for conversation in conversations:
            taxonomy = taxonomy_of(conversation)
            for pair in self.pairs(conversation):
                yield Item(TASK, conversation, pair.turn_index, pair.item_id, taxonomy)

    async def evaluate(
        self, item: Item, model: str, caller: Caller, judges: list[str]
    ) -> ItemRecord:
        pair = p.find_pair(self.pairs(item.conversation), item.turn_index, item.item_id)
        turn = h.turn_at(item.conversation, pair.turn_index)
        profile = profile_of(turn) if self.participant_context else Profile()
        context = JudgeContext.at(item, pair.turn_index, profile)
        shown = {o: ordered(pair, o) for o in ORDERS}
        calls = dict(zip(ORDERS, await asyncio.gather(*(
            judge_pair(caller, model, context, a.text, b.text, o) for o, (a, b) in shown.items()
        )), strict=True))  # fmt: skip
        results = [c.result for c in calls.values()]
        meta = pair_meta(pair)
        common: dict[str, Any] = {
            "gold": pair_gold(pair), "meta": meta,
            "verdicts": [c.verdict for c in calls.values()],
            "raw_output": joined_raw([(o, c.result.text) for o, c in calls.items()]),
        }  # fmt: skip
        if not all(r.ok for r in results):
            error = failure_message([(o, c.result) for o, c in calls.items()])
            return record(item, model, "failed", results, error=error, **common)
        winners = {
            o: c.parsed.winner for o, c in calls.items() if isinstance(c.parsed, PairwiseVerdict)
        }
        picks = {o: pick_of(w, shown[o][0].key, shown[o][1].key) for o, w in winners.items()}
        prediction = {**picks, **{f"{o}_letter": letter for o, letter in winners.items()}}
        if len(picks) < len(ORDERS):
            agree = {
                f"agree_{o}": float(picks[o] == pair.gold) if o in picks else None for o in ORDERS
            }
            invalid = [o for o in ORDERS if o not in picks]
            return record(
                item, model, "invalid", results, prediction=prediction, score=0.0,
                scores={**agree, "consistent": None},
                error=f"unparseable verdict in order {', '.join(invalid)}", **common,
            )  # fmt: skip
        outcome = both_orders(picks["ab"], picks["ba"], pair.gold)
        agrees = outcome["consistent"] == 1.0 and outcome["correct_ab"] == 1.0
        scores: dict[str, float | None] = {
            "agree_ab": outcome["correct_ab"],
            "agree_ba": outcome["correct_ba"],
            "consistent": outcome["consistent"],
        }
        return record(
            item, model, "ok", results, prediction=prediction, score=float(agrees),
            scores=scores, **common,
        )  # fmt: skip


@TASKS.register(TASK)
def judge_audit_task(
    derive_from_ratings: bool = True,
    max_derived_pairs: int = p.DEFAULT_DERIVED_CAP,
    participant_context: bool = True,
) -> JudgeAuditTask:
    """The judge on the participants' own pairs, in both orders; needs at least one `--judge`."""
    if max_derived_pairs < 0:
        raise ValueError(f"max_derived_pairs must be >= 0 (got {max_derived_pairs})")
    return JudgeAuditTask(derive_from_ratings, max_derived_pairs, participant_context)
