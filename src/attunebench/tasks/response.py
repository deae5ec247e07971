"""`response`: the model writes its own reply; judges score it for this participant.

Construct: LLM-as-a-judge response quality (MT-Bench / Arena-Hard style), made personal: the
judge is told what this participant told us before seeing any reply (how they felt, what would
help most; see `tasks.helpers.judging`), and for the rubric the reply they chose and the one they
rejected, and judges for them, not for an average reader.

Items: turns with a recorded pick and at least one other reply (the rejected one: the lowest
rated, or the first in the data). In a chat the person held with a real model (ConvAI1's
human-bot chats), turns with that model's one reply are items too, judged by the rubric alone:
with no rejected reply there is nothing to compare with, so they are left out (and counted)
with `judge_mode="pairwise"`. The same judges score the real reply with the same rubric; it is
shown as the reference row `reference/real-reply`, with the person's own thumb beside it (see
`tasks.helpers.real_reply`), and never ranked. The model sees the conversation as chat messages, as
it happened, ending with the user's message; informed mode adds the earlier self-reports after
that message (the system message stays the same, so the conversation is a shared prefix).

Judging (`judge_mode`): `pairwise` compares the reply with the chosen reply and with the
rejected one, each in both orders (win 1, tie 0.5, loss 0, averaged over the orders);
`rubric` asks for an absolute 1-10 score; `both` (default) does both. Per judge the values are
`win_vs_chosen[JUDGE]`, `win_vs_rejected[JUDGE]`, `rubric[JUDGE]`; without a suffix, the
panel's: for a comparison, the majority of the judges' verdicts in each order (a split panel
scores 0.5; one judge is its own majority), averaged over the orders; for the rubric, the
judges' mean. `score`, the headline, is the mean of win_vs_chosen and win_vs_rejected, or
with `judge_mode="rubric"` and on items judged by the rubric alone, (rubric-1)/9.

A verdict the judge made unusable counts as a loss for the model (the lowest rubric score): a
judge that fails on the items a model would lose must not raise its score. An item with a
comparison judged in one order only is flagged `one-order-only` (its position balance is
lost); an item with no usable verdict at all is `invalid`, scored 0, and counted. An empty
reply is invalid and not judged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from operator import attrgetter
from typing import Any

import numpy as np

from attunebench import tasks
from attunebench.answerform import AnswerForm, TaskHint, heaviest, pick, registered
from attunebench.data.schema import Conversation, Turn
from attunebench.data.taxonomy import taxonomy_of
from attunebench.frozen import Frozen
from attunebench.judge.forms import PAIRWISE_ANSWERS, RUBRIC_ANSWERS
from attunebench.records import ItemRecord
from attunebench.tasks.helpers import history, metrics
from attunebench.tasks.helpers import real_reply as real
from attunebench.tasks.helpers.judge_values import (
    COMPARISONS,
    MODEL_FIRST,
    REFERENCE_FIRST,
    judge_values,
    mean,
)
from attunebench.tasks.helpers.judging import (
    PAIRWISE,
    PAIRWISE_CHOICE,
    RUBRIC,
    JudgeContext,
    pairwise_query,
    profile_of,
    rubric_query,
)
from attunebench.tasks.helpers.pairs import reference_replies
from attunebench.tasks.helpers.prompting import REPLY_PARAMS, chat_messages, self_reports_block
from attunebench.tasks.judge_thumbs import thumb

TASK = "response"
PROMPT = tasks.task_prompt(__name__)
JUDGE_MODES = ("both", "pairwise", "rubric")
ONE_ORDER = "one-order-only"
# Generic supportive replies that ignore what was said: a judge that rates them well is not
# measuring attunement.
CANNED_REPLIES = (
    "That sounds really hard. I'm here to listen if you want to say more.",
    "Thank you for telling me. How are you feeling about it right now?",
    "It makes sense that you feel this way. What would help most at the moment?",
    "I'm sorry you're going through this. You don't have to face it alone.",
    "That's a lot to carry. Would you like to talk through what happened?",
)


class ResponseAnswers(AnswerForm):
    """The reply itself, as plain text, from a hint carrying the user's message as `text`.
    The gold's answer is the reply the participant chose (right) or the one they rejected; at
    a real model's reply, that reply where the person's thumb says so."""

    kind = TASK

    def example(self, hint: TaskHint) -> str:
        return "That sounds really hard. I'm here with you; do you want to tell me more?"

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        return pick(rng, CANNED_REPLIES)

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        key = "chosen_text" if right else "rejected_text"
        if gold.get("real") is not None:  # a real model's reply: right if the person liked it
            key = "real_text" if gold.get("real_liked") is right else ""
        return str(gold.get(key) or "I hear you.")

    def combine(
        self, golds: Sequence[Mapping[str, Any]], weights: Sequence[float] | None = None
    ) -> dict[str, Any]:
        """The heaviest gold, whole: replies cannot be averaged."""
        return heaviest(golds, weights)


ANSWERS = registered(ResponseAnswers())


class ResponseGold(tasks.Gold):
    """The participant's chosen and rejected replies; or, in a chat with a real model, that
    model's reply (`real`), with the person's thumb on it (None: not rated)."""

    chosen: str | None = None
    rejected: str | None = None
    chosen_text: str = ""
    rejected_text: str = ""
    real: str | None = None
    real_text: str = ""
    real_liked: bool | None = None


class ResponsePrediction(Frozen):
    reply: str


ResponseView = tasks.View[ResponseGold, ResponsePrediction]


def _prediction(reply: str) -> ResponsePrediction:
    return ResponsePrediction(reply=reply)


def _real_guess(view: ResponseView) -> tasks.Guess:
    return real.guess(view, _prediction)


class ResponseScoring(tasks.Scoring[ResponseGold, ResponsePrediction]):
    headline = "judge win rate"

    def recorded_references(self) -> Mapping[str, tasks.RecordedReference[ResponseGold]]:
        return {real.REFERENCE: tasks.RecordedReference(real.VALUE, _real_guess)}

    def extra_metrics(self, records: Sequence[ItemRecord]) -> tuple[metrics.Metric, ...]:
        """One mean per judge and value (`win_vs_chosen[JUDGE]`, ...), for the judges seen."""
        held = set(map(tuple, map(attrgetter("scores"), records)))  # a few sets of keys
        keys = sorted(
            {k for shape in held for k in shape if "[" in k and not k.startswith(real.VALUE)}
        )
        return tuple(
            metrics.column_metric(key, f"{key.split('[')[0]} by judge {key.split('[')[1][:-1]}")
            for key in keys
        )

    metrics = metrics.register(
        TASK,
        metrics.column_metric("score", headline),
        metrics.column_metric("win_vs_chosen", "win rate against the reply the participant chose"),
        metrics.column_metric(
            "win_vs_rejected", "win rate against the reply the participant rejected"
        ),
        metrics.column_metric("rubric", "mean rubric score (1-10)"),
        metrics.column_metric(
            "one_order_share",
            "share of judged items with a comparison judged in one order only",
            metrics.Column(flag=ONE_ORDER),
            higher_is_better=False,
        ),
        *real.METRICS,
    )


class ResponseTask(tasks.Task[ResponseGold, ResponsePrediction], scoring=ResponseScoring):
    name = TASK
    gold_type = ResponseGold
    prediction_type = ResponsePrediction
    gold_fields = ("preference", "need", "rating")  # rating: the thumb on a real reply
    subject_forms = (ANSWERS,)
    needs_judge = True

    def __init__(self, context: str, judge_mode: str, comment: bool) -> None:
        super().__init__(context)
        self.judge_mode, self.comment = judge_mode, comment
        judged = (PAIRWISE, PAIRWISE_CHOICE) if judge_mode != "rubric" else ()
        self.templates = (PROMPT, *judged, *((RUBRIC,) if judge_mode != "pairwise" else ()))

    @property
    def judge_forms(self) -> tuple[AnswerForm, ...]:
        pairwise = (PAIRWISE_ANSWERS,) if self.judge_mode != "rubric" else ()
        return pairwise + ((RUBRIC_ANSWERS,) if self.judge_mode != "pairwise" else ())

    def gold_counts(self, conversations: Iterable[Conversation]) -> tasks.GoldCounts:
        """Turns with something to judge a new reply against: a chosen reply, the text or the
        behaviors the person said they needed."""
        counts: Counter[str] = Counter()
        for turn in (turn for c in conversations for turn in c.turns):
            need, preference = turn.need, turn.preference
            chosen = None
            if preference is not None and preference.chosen is not None:
                chosen = turn.response(preference.chosen)
            wanted = {
                "with_chosen_reply": chosen is not None,
                "with_wanted_text": bool(need and need.text and need.text.strip()),
                "with_wanted_behaviors": bool(need and need.behaviors),
            }
            counts.update(turns=any(wanted.values()), **wanted)
        names = ("turns", "with_chosen_reply", "with_wanted_text", "with_wanted_behaviors")
        return tasks.GoldCounts(
            {name: counts[name] for name in names},
            {TASK: (counts["turns"], ("preference", "need"))},
        )

    def items(self, conversations: Iterable[Conversation]) -> Iterator[tasks.Item[ResponseGold]]:
        for conversation in conversations:
            taxonomy = taxonomy_of(conversation)
            for turn in conversation.turns:
                found = self._gold(conversation, turn)
                if found is None:
                    continue
                gold = tasks.in_part(found, conversation)
                for mode in self.modes:
                    yield tasks.Item(TASK, conversation, turn.index, "reply", taxonomy, gold, mode)

    def _gold(self, conversation: Conversation, turn: Turn) -> ResponseGold | None:
        references = reference_replies(turn)
        if references is not None:
            chosen, rejected = references
            return ResponseGold(
                chosen=chosen.id,
                rejected=rejected.id,
                chosen_text=chosen.text,
                rejected_text=rejected.text,
            )
        reply = real.real_reply(conversation, turn)
        if reply is None or self.judge_mode == "pairwise":
            return None
        liked = thumb(conversation, reply)
        return ResponseGold(real=reply.id, real_text=reply.text, real_liked=liked)

    def left_out(self, conversations: Sequence[Conversation]) -> dict[str, int]:
        if self.judge_mode != "pairwise":
            return {}
        only = sum(
            real.real_reply(c, t) is not None and reference_replies(t) is None
            for c in conversations
            for t in c.turns
        )
        return {"turns with only a real model's reply (pairwise judging needs two)": only}

    def queries(self, item: tasks.Item[ResponseGold], mode: tasks.AnswerMode) -> list[tasks.Query]:
        conversation = item.conversation
        turn = history.turn_at(conversation, item.turn_index)
        variant = item.context
        reports = self_reports_block(
            variant, history.self_reports_before(conversation, turn.index), conversation
        )
        system = PROMPT.render()[0].content
        messages = chat_messages(
            system, history.history_through(conversation, turn.index), note=reports
        )
        hint = TaskHint(
            kind=TASK,
            text=turn.user,
            history=history.hint_history(history.history_before(conversation, turn.index)),
            form=ANSWERS,
        )
        return [tasks.Query("reply", messages, PROMPT.info, REPLY_PARAMS, hint)]

    def parse(
        self, item: tasks.Item[ResponseGold], outputs: Mapping[str, tasks.Output]
    ) -> ResponsePrediction:
        reply = (outputs["reply"].text or "").strip()
        if not reply:
            raise tasks.InvalidAnswer("the reply is empty")
        return ResponsePrediction(reply=reply)

    def judge_queries(
        self, item: tasks.Item[ResponseGold], prediction: ResponsePrediction, judges: Sequence[str]
    ) -> list[tasks.Query]:
        turn = history.turn_at(item.conversation, item.turn_index)
        references = None if item.gold.real is not None else reference_replies(turn)
        profile = profile_of(item.conversation, turn, references, comment=self.comment)
        context = JudgeContext.at(item.conversation, turn.index, profile)
        others = (
            {"vs_chosen": references[0].text, "vs_rejected": references[1].text}
            if references is not None and self.judge_mode != "rubric"
            else {}
        )
        reply, queries = prediction.reply, []
        for judge in judges:
            if others:
                for comparison, other in others.items():
                    key = f"{comparison}/{{}}@{judge}"
                    queries += [
                        pairwise_query(context, reply, other, key.format(MODEL_FIRST), judge=judge),
                        pairwise_query(
                            context, other, reply, key.format(REFERENCE_FIRST), judge=judge
                        ),
                    ]
            if self.judge_mode != "pairwise":
                queries.append(rubric_query(context, reply, f"rubric@{judge}", judge=judge))
            if item.gold.real is not None:
                key = f"{real.QUERY}/rubric@{judge}"
                asked = rubric_query(context, item.gold.real_text, key, judge=judge)
                queries.append(replace(asked, of_reference=True))
        return queries

    def _mode(self, item: tasks.Item[ResponseGold]) -> str:
        """How an item is judged: by the rubric alone where there is no pair to compare with."""
        return "rubric" if item.gold.real is not None else self.judge_mode

    def judged(
        self,
        item: tasks.Item[ResponseGold],
        prediction: ResponsePrediction,
        verdicts: Sequence[tasks.JudgedVerdict],
    ) -> tasks.Scored:
        judges = list(dict.fromkeys(v.query.model or "" for v in verdicts))
        own = [v for v in verdicts if not v.query.of_reference]
        values, one_order = judge_values(own, judges, self._mode(item))
        values |= real.real_values([v for v in verdicts if v.query.of_reference], judges)
        flags = (ONE_ORDER,) if one_order else ()
        if not any(v.verdict.status == "ok" for v in own):
            return tasks.Scored(0.0, values, flags, invalid="no usable verdict from any judge")
        if self._mode(item) == "rubric":
            rubric = values["rubric"]
            return tasks.Scored(None if rubric is None else (rubric - 1.0) / 9.0, values, flags)
        wins = [v for c in COMPARISONS if (v := values[f"win_{c}"]) is not None]
        return tasks.Scored(mean(wins), values, flags)

    def score(self, item: tasks.Item[ResponseGold], prediction: ResponsePrediction) -> tasks.Scored:
        raise AssertionError("a response is scored by its judges (judged)")


@tasks.register_task(TASK)
def response_task(
    context: str = history.DEFAULT_CONTEXT,
    judge_mode: str = "both",
    participant_comment: bool = False,
    seed: int = 0,
) -> ResponseTask:
    """Reply generation judged for the participant; needs at least one `--judge`.

    `participant_comment` also shows the judge the participant's post-hoc comment, written
    after reading the replies (off by default: it can give their pick away)."""
    tasks.check_choice("judge_mode", judge_mode, JUDGE_MODES)
    return ResponseTask(context, judge_mode, participant_comment)
