"""`response`: the model writes its own reply; judges score it for this participant.

The judge is told what this participant told us before seeing any reply (`tasks.helpers.judging`)
and judges for them; in a chat the person held with a real model (ConvAI1) the judges score that
model's reply too, a reference row (`reference/real-reply`) beside the person's own thumb. An
unusable verdict counts as a loss: a judge that fails on the items a model would lose must not
raise its score. The judge modes, values and flags: docs/tasks.md.
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
from attunebench.data.schema import Conversation, Response, Turn
from attunebench.frozen import Frozen
from attunebench.judge.forms import PAIRWISE_ANSWERS, RUBRIC_ANSWERS
from attunebench.records import ItemRecord
from attunebench.stats import FloatArray, IntArray
from attunebench.tasks.helpers import calibration, history, judging, metrics, pairs
from attunebench.tasks.helpers.pairs import chosen_reply, reference_replies
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
    """The reply itself, as plain text; the gold's is the reply chosen (right) or rejected,
    or a real model's reply where the person's thumb says so."""

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
    """The chosen and rejected replies; or a real model's reply with the person's thumb."""

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


REAL_REFERENCE = "reference/real-reply"
REAL_QUERY = "real"  # judge query keys: real/rubric@JUDGE
REAL_VALUE = "real_rubric"  # record values: real_rubric (the judges' mean), real_rubric[JUDGE]


def real_reply(conversation: Conversation, turn: Turn) -> Response | None:
    """The one reply a real model gave at this turn of a chat the person held with it."""
    if not pairs.talked_to_model(conversation):
        return None
    replies = [r for r in turn.responses if r.text.strip()]
    return replies[0] if len(replies) == 1 else None


def real_values(verdicts: Sequence[tasks.JudgedVerdict], judges: Sequence[str]) -> dict[str, float]:
    """Each judge's rubric score of the real reply and their mean. Unlike a model's answer, an
    unusable verdict is no score (not the lowest): the real reply has no score to protect."""
    values: dict[str, float] = {}
    for judge in judges:
        mine = [v for v in verdicts if v.query.model == judge and v.verdict.status == "ok"]
        scores = [float((v.verdict.parsed or {})["score"]) for v in mine]
        if (score := judging.mean(scores)) is not None:
            values[f"{REAL_VALUE}[{judge}]"] = score
    if (panel := judging.mean(list(values.values()))) is not None:
        values[REAL_VALUE] = panel
    return values


def real_thumb_rows(views: Sequence[ResponseView]) -> tuple[FloatArray, IntArray]:
    """Per real reply with a thumb and a score: (the score, 1 if liked), and its view's index."""
    rows, owners = [], []
    for index, view in enumerate(views):
        score, liked = view.value(REAL_VALUE), view.gold.real_liked
        if score is not None and liked is not None:
            rows.append((score, float(liked)))
            owners.append(index)
    return np.array(rows, dtype=np.float64).reshape(-1, 2), np.array(owners, dtype=np.int64)


def _real_mean(name: str, description: str, liked: bool) -> metrics.Metric:
    """The mean rubric score of the real replies whose thumb was `liked`."""

    def scored(view: ResponseView) -> float | None:
        return view.value(REAL_VALUE) if view.gold.real_liked is liked else None

    return replace(metrics.mean_metric(name, description, scored), of_references=True)


REAL_METRICS = (
    _real_mean("real_rubric_thumb_up", "mean rubric score of real replies given a thumb up", True),
    _real_mean(
        "real_rubric_thumb_down", "mean rubric score of real replies given a thumb down", False
    ),
    metrics.Metric(
        "real_thumb_auroc",
        "agreement of the real replies' rubric score with the person's thumb (AUROC; 0.5 is "
        "chance)",
        real_thumb_rows,
        calibration.auroc_statistic,
        of_references=True,
    ),
)


def _real_guess(view: ResponseView) -> tasks.Guess:
    """The real reply as the reference's guess, scored as a reply judged by the rubric alone
    (None where no judge scored it)."""
    score = view.value(REAL_VALUE)
    if view.gold.real is None or score is None:
        return None
    values = {"rubric": score, REAL_VALUE: score}
    return ResponsePrediction(reply=view.gold.real_text), tasks.Scored((score - 1.0) / 9.0, values)


class ResponseScoring(tasks.Scoring[ResponseGold, ResponsePrediction]):
    headline = "judge win rate"

    def recorded_references(self) -> Mapping[str, tasks.RecordedReference[ResponseGold]]:
        return {REAL_REFERENCE: tasks.RecordedReference(REAL_VALUE, _real_guess)}

    def extra_metrics(self, records: Sequence[ItemRecord]) -> tuple[metrics.Metric, ...]:
        """One mean per judge and value (`win_vs_chosen[JUDGE]`, ...), for the judges seen."""
        held = set(map(tuple, map(attrgetter("scores"), records)))  # a few sets of keys
        keys = sorted(
            {k for shape in held for k in shape if "[" in k and not k.startswith(REAL_VALUE)}
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
        *REAL_METRICS,
    )


@tasks.register_task(TASK)
class ResponseTask(tasks.Task[ResponseGold, ResponsePrediction], scoring=ResponseScoring):
    """Reply generation judged for the participant; needs at least one `--judge`.

    `participant_comment` also shows the judge the participant's post-hoc comment, written
    after reading the replies (off by default: it can give their pick away)."""

    name = TASK
    gold_fields = ("preference", "need", "rating")  # rating: the thumb on a real reply
    subject_forms = (ANSWERS,)
    needs_judge = True

    def __init__(
        self,
        context: str = history.DEFAULT_CONTEXT,
        judge_mode: str = "both",
        participant_comment: bool = False,
        seed: int = 0,
    ) -> None:
        if judge_mode not in JUDGE_MODES:
            raise ValueError(
                f"judge_mode must be one of {', '.join(JUDGE_MODES)} (got {judge_mode!r})"
            )
        super().__init__(context)
        self.judge_mode, self.comment = judge_mode, participant_comment
        judged = (judging.PAIRWISE, judging.PAIRWISE_CHOICE) if judge_mode != "rubric" else ()
        self.templates = (PROMPT, *judged, *((judging.RUBRIC,) if judge_mode != "pairwise" else ()))

    @property
    def judge_forms(self) -> tuple[AnswerForm, ...]:
        pairwise = (PAIRWISE_ANSWERS,) if self.judge_mode != "rubric" else ()
        return pairwise + ((RUBRIC_ANSWERS,) if self.judge_mode != "pairwise" else ())

    def gold_counts(self, conversations: Iterable[Conversation]) -> tasks.GoldCounts:
        """Turns with a chosen reply, or the text or behaviors the person said they needed."""
        counts: Counter[str] = Counter()
        for turn in (turn for c in conversations for turn in c.turns):
            need = turn.need
            wanted = {
                "with_chosen_reply": chosen_reply(turn) is not None,
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
            for turn in conversation.turns:
                if (gold := self._gold(conversation, turn)) is not None:
                    yield from tasks.in_contexts(self, conversation, turn.index, "reply", gold)

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
        reply = real_reply(conversation, turn)
        if reply is None or self.judge_mode == "pairwise":
            return None
        liked = thumb(conversation, reply)
        return ResponseGold(real=reply.id, real_text=reply.text, real_liked=liked)

    def left_out(self, conversations: Sequence[Conversation]) -> dict[str, int]:
        if self.judge_mode != "pairwise":
            return {}
        only = sum(
            real_reply(c, t) is not None and reference_replies(t) is None
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
        profile = judging.profile_of(item.conversation, turn, references, comment=self.comment)
        context = judging.JudgeContext.at(item.conversation, turn.index, profile)
        others = (
            {"vs_chosen": references[0].text, "vs_rejected": references[1].text}
            if references is not None and self.judge_mode != "rubric"
            else {}
        )
        reply, queries = prediction.reply, []
        for judge in judges:
            for comparison, other in others.items():
                key = f"{comparison}/{{}}@{judge}"
                queries += [
                    judging.pairwise_query(
                        context, reply, other, key.format(judging.MODEL_FIRST), judge=judge
                    ),
                    judging.pairwise_query(
                        context, other, reply, key.format(judging.REFERENCE_FIRST), judge=judge
                    ),
                ]
            if self.judge_mode != "pairwise":
                queries.append(judging.rubric_query(context, reply, f"rubric@{judge}", judge=judge))
            if item.gold.real is not None:
                key = f"{REAL_QUERY}/rubric@{judge}"
                asked = judging.rubric_query(context, item.gold.real_text, key, judge=judge)
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
        values, one_order = judging.judge_values(own, judges, self._mode(item))
        values |= real_values([v for v in verdicts if v.query.of_reference], judges)
        flags = (ONE_ORDER,) if one_order else ()
        if not any(v.verdict.status == "ok" for v in own):
            return tasks.Scored(0.0, values, flags, invalid="no usable verdict from any judge")
        if self._mode(item) == "rubric":
            rubric = values["rubric"]
            return tasks.Scored(None if rubric is None else (rubric - 1.0) / 9.0, values, flags)
        wins = [v for c in judging.COMPARISONS if (v := values[f"win_{c}"]) is not None]
        return tasks.Scored(judging.mean(wins), values, flags)

    def score(self, item: tasks.Item[ResponseGold], prediction: ResponsePrediction) -> tasks.Scored:
        raise AssertionError("a response is scored by its judges (judged)")
