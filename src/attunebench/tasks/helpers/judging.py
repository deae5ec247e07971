"""Asking a judge and reading its verdicts: what it is told about the participant (what it
sees and why: docs/tasks.md, paragraph "The judge"), the queries it answers, each answer read
into an auditable `Verdict`, and a response's values from them.

Pairwise, a verdict scores the model 1 (win), 0.5 (tie) or 0 (loss or unusable: a judge that
fails on the items a model would lose must not raise its score); rubric, a judge's mean score
(unusable: 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from attunebench.answerform import AnswerForm, TaskHint
from attunebench.data.schema import Conversation, Response, State, Turn
from attunebench.judge.forms import PAIRWISE_ANSWERS, RUBRIC_ANSWERS
from attunebench.prompts import delimit
from attunebench.records import Verdict
from attunebench.tasks.base import InvalidAnswer, JudgedVerdict, Output, Query
from attunebench.tasks.helpers import history
from attunebench.tasks.helpers.parsing import a_b_tie, answer_fields, bounded_number, reason_of
from attunebench.tasks.helpers.prompting import choice_form, reporter, transcript
from attunebench.tasks.helpers.wording import task_prompt, words

PAIRWISE = task_prompt(__name__, "judge-pairwise")
RUBRIC = task_prompt(__name__, "judge-rubric")
PAIRWISE_CHOICE = task_prompt(__name__, "judge-pairwise-choice")
VerdictMode = Literal["pairwise", "rubric"]
COMPARISONS = ("vs_chosen", "vs_rejected")
MODEL_FIRST, REFERENCE_FIRST = "model-first", "reference-first"


@dataclass(frozen=True, slots=True)
class Profile:
    """What the participant told us about one turn."""

    state: State | None = None
    reporter: str = ""
    need: str | None = None
    need_behaviors: tuple[str, ...] = ()
    comment: str | None = None  # post-hoc, after the replies: shown only when asked for
    chosen: str | None = None
    rejected: str | None = None


def profile_of(
    conversation: Conversation,
    turn: Turn,
    references: tuple[Response, Response] | None = None,
    *,
    comment: bool = False,
    informed: bool = True,
) -> Profile:
    """What the judge is told of the participant (`informed` False: nothing, a blind judge)."""
    if not informed:
        return Profile()
    need, preference = turn.need, turn.preference
    return Profile(
        state=turn.state,
        reporter=reporter(conversation),
        need=need.text if need else None,
        need_behaviors=need.behaviors if need else (),
        comment=preference.comment if comment and preference else None,
        chosen=references[0].text if references else None,
        rejected=references[1].text if references else None,
    )


def participant_block(profile: Profile, *, references: bool) -> str:
    """The profile as the judge reads it; the reference replies only if `references`."""
    facts = []
    if profile.state is not None:
        state = history.describe_state(profile.state)
        facts.append(words("told_felt", reporter=profile.reporter, state=state))
    if profile.need:
        facts.append(words("told_need", need=profile.need))
    if profile.need_behaviors:
        facts.append(words("told_wanted", behaviors=", ".join(profile.need_behaviors)))
    if profile.comment:
        facts.append(words("told_comment", comment=profile.comment))
    parts = [
        words("participant_told_us"),
        delimit("participant", "\n".join(facts) or words("nothing_told")),
    ]
    if references and profile.chosen:
        parts += [words("preferred_reply"), delimit("preferred_reply", profile.chosen)]
    if references and profile.rejected:
        parts += [words("rejected_reply"), delimit("rejected_reply", profile.rejected)]
    return "\n".join(parts) + "\n"


@dataclass(frozen=True, slots=True)
class JudgeContext:
    """Everything about an item a judge query needs, rendered once."""

    conversation: str
    history: tuple[tuple[str, str], ...]
    user_text: str
    profile: Profile

    @classmethod
    def at(cls, conversation: Conversation, turn_index: int, profile: Profile) -> JudgeContext:
        return cls(
            conversation=transcript(history.history_through(conversation, turn_index)),
            history=history.hint_history(history.history_before(conversation, turn_index)),
            user_text=history.turn_at(conversation, turn_index).user,
            profile=profile,
        )

    def hint(self, form: AnswerForm, candidates: dict[str, str], *, references: bool) -> TaskHint:
        """What a proxy judge reads, on the same footing as the prompt."""
        reference = {"wanted": self.profile.need}
        if references:
            reference.update(chosen=self.profile.chosen, rejected=self.profile.rejected)
        return TaskHint(
            text=self.user_text,
            candidates=candidates,
            history=self.history,
            reference={key: value for key, value in reference.items() if value},
            form=form,
        )


def pairwise_query(
    context: JudgeContext, a: str, b: str, key: str, *, judge: str | None = None
) -> Query:
    """Which of A and B this participant would have found better (`judge` None: the
    evaluated model is the judge, as in the judge audit)."""
    fields = {
        "conversation": context.conversation,
        "participant": participant_block(context.profile, references=False),
        "reply_a": delimit("reply_a", a),
        "reply_b": delimit("reply_b", b),
    }
    hint = context.hint(PAIRWISE_ANSWERS, {"A": a, "B": b}, references=False)
    base = PAIRWISE_CHOICE.render(**fields)
    options = [("A", words("reply_a")), ("B", words("reply_b"))]
    form = choice_form(base, words("judge_question"), options)
    return Query(
        key,
        PAIRWISE.render(**fields),
        PAIRWISE.info,
        hint=hint,
        role="judge",
        model=judge,
        choice=form,
    )


def rubric_query(
    context: JudgeContext,
    reply: str,
    key: str,
    *,
    judge: str | None,
    form: AnswerForm = RUBRIC_ANSWERS,
) -> Query:
    """An absolute 1-10 score of one reply for this participant (`judge` None: the evaluated
    model is the judge, as in `judge_thumbs`)."""
    messages = RUBRIC.render(
        conversation=context.conversation,
        participant=participant_block(context.profile, references=True),
        reply=delimit("reply", reply),
    )
    hint = context.hint(form, {"A": reply}, references=True)
    return Query(key, messages, RUBRIC.info, hint=hint, role="judge", model=judge)


def parse_pairwise(text: str) -> dict[str, Any]:
    found = answer_fields(text)
    if "winner" not in found:
        raise InvalidAnswer("the verdict has no 'winner'")
    return {"winner": a_b_tie(found["winner"], "winner"), "reason": reason_of(found)}


def parse_rubric(text: str) -> dict[str, Any]:
    found = answer_fields(text)
    score = bounded_number(found.get("score"), 1, 10, "score")
    if score is None:
        raise InvalidAnswer("the verdict has no 'score'")
    return {"score": score, "reason": reason_of(found)}


def rendered(query: Query) -> str:
    messages = query.choice.messages if query.choice is not None else query.messages
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)


def read_verdict(judge: str, query: Query, output: Output) -> Verdict:
    """The verdict of one judge query; never raises."""
    hint = query.hint
    mode: VerdictMode = (
        "pairwise" if hint is not None and hint.kind == PAIRWISE_ANSWERS.kind else "rubric"
    )
    parsed: dict[str, Any] | None = None
    status: Any = "failed"
    if output.probabilities is not None:  # choice mode: the more probable of A and B wins
        a, b = output.probabilities.get("A", 0.0), output.probabilities.get("B", 0.0)
        winner = "tie" if a == b else ("A" if a > b else "B")
        p_a = a / (a + b) if a + b else 0.5
        parsed, status = {"winner": winner, "p_a": p_a, "reason": "choice probabilities"}, "ok"
    elif output.text is not None:
        try:
            parsed = (
                parse_pairwise(output.text) if mode == "pairwise" else parse_rubric(output.text)
            )
            status = "ok"
        except InvalidAnswer:
            status = "invalid"
    return Verdict(
        judge=judge,
        prompt_id=query.prompt.id,
        prompt_version=query.prompt.version,
        mode=mode,
        order=query.key.partition("@")[0],
        rendered_prompt=rendered(query),
        raw_output=output.shown,
        parsed=parsed,
        status=status,
    )


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def win(verdict: JudgedVerdict) -> float:
    """The model's result in one pairwise verdict: 1 win, 0.5 tie, 0 loss or unusable."""
    parsed = verdict.verdict.parsed if verdict.verdict.status == "ok" else None
    if parsed is None:
        return 0.0
    mine = "A" if verdict.query.key.split("@")[0].endswith(MODEL_FIRST) else "B"
    winner = parsed.get("winner")
    return 0.5 if winner == "tie" else float(winner == mine)


def judge_values(
    verdicts: Sequence[JudgedVerdict], judges: Sequence[str], mode: str
) -> tuple[dict[str, float | None], bool]:
    """Per-judge and ensemble values, and whether some comparison lost an order."""
    values: dict[str, float | None] = {}
    one_order = False
    comparisons = COMPARISONS if mode != "rubric" else ()
    for judge in judges:
        mine = [v for v in verdicts if v.query.model == judge]
        for comparison in comparisons:
            asked = [v for v in mine if v.query.key.startswith(comparison)]
            one_order |= sum(v.verdict.status == "ok" for v in asked) == 1
            values[f"win_{comparison}[{judge}]"] = mean([win(v) for v in asked])
        if mode != "pairwise":
            scores = [
                float((v.verdict.parsed or {}).get("score", 1.0))
                if v.verdict.status == "ok"
                else 1.0
                for v in mine
                if v.verdict.mode == "rubric"
            ]
            values[f"rubric[{judge}]"] = mean(scores)
    for comparison in comparisons:
        asked = [v for v in verdicts if v.query.key.startswith(comparison)]
        values[f"win_{comparison}"] = panel_win(asked)
    if mode != "pairwise":
        values["rubric"] = mean([v for j in judges if (v := values[f"rubric[{j}]"]) is not None])
    return values, one_order


def majority(wins: Sequence[float]) -> float:
    """The panel's verdict from its judges' (1 win, 0.5 tie, 0 loss): the result most judges
    gave; 0.5 when no result has more votes than each other (a split panel)."""
    votes = {result: sum(w == result for w in wins) for result in (1.0, 0.5, 0.0)}
    top = max(votes.values())
    leaders = [result for result, count in votes.items() if count == top]
    return leaders[0] if len(leaders) == 1 else 0.5


def panel_win(verdicts: Sequence[JudgedVerdict]) -> float | None:
    """The panel's win rate in one comparison: its majority in each order, averaged."""
    by_order: dict[str, list[float]] = {}
    for verdict in verdicts:
        by_order.setdefault(verdict.query.key.split("@")[0], []).append(win(verdict))
    return mean([majority(wins) for wins in by_order.values()])
