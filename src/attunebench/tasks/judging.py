"""Calling a judge: what it is told about the participant, and the auditable verdict it gives.

The judge sees the conversation (text only), the participant's profile at this turn (their
self-reported state, their own words about what they wanted, the behaviors they wanted) and
the candidates, quoted as data (see `judge.templates.delimit`). A rubric judge, scoring one
reply alone, is also shown the reply the participant preferred and the one they rejected. A
pairwise judge is not: one of its two candidates is always such a reference (the model's reply
against the chosen or the rejected one, or in the audit the two themselves), and telling it
"the person preferred this very text" would decide the comparison for it. So every pairwise
verdict, in the response task and in the judge audit alike, is made on the same footing, and
the audit measures the judge as the response task uses it.

Every call gives a `records.Verdict` with the prompt id and version, the rendered prompt and
the raw output, and status ok, invalid (unparseable; excluded from means) or failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from attunebench.data.schema import Response, State, Turn
from attunebench.judge.catalog import pairwise_prompt, rubric_prompt
from attunebench.judge.templates import PromptTemplate, delimit
from attunebench.models.base import GenerateParams, Message
from attunebench.models.hints import TaskHint
from attunebench.records import Status, Verdict
from attunebench.tasks import history as h
from attunebench.tasks.base import Caller, CallResult, Item
from attunebench.tasks.parsing import (
    InvalidAnswer,
    PairwiseVerdict,
    RubricVerdict,
    parse_pairwise,
    parse_rubric,
)
from attunebench.tasks.prompting import transcript

JUDGE_PARAMS = GenerateParams(temperature=0.0, max_tokens=300, json_mode=True)
NOTHING_TOLD = "(they told us nothing beyond the conversation)"


@dataclass(frozen=True, slots=True)
class Profile:
    """What the participant told us about one turn."""

    state: State | None = None
    wanted: str | None = None
    wanted_behaviors: tuple[str, ...] = ()
    chosen: str | None = None
    rejected: str | None = None


def profile_of(turn: Turn, references: tuple[Response, Response] | None = None) -> Profile:
    need = turn.need
    return Profile(
        state=turn.state,
        wanted=need.text if need else None,
        wanted_behaviors=need.behaviors if need else (),
        chosen=references[0].text if references else None,
        rejected=references[1].text if references else None,
    )


def participant_block(profile: Profile, *, references: bool) -> str:
    """The profile as the judge reads it; the reference replies only if `references`."""
    facts = []
    if profile.state is not None:
        facts.append(f"- how they felt at their message: {h.describe_state(profile.state)}")
    if profile.wanted:
        facts.append(f"- what they wanted from the reply, in their words: {profile.wanted}")
    if profile.wanted_behaviors:
        facts.append(f"- what they wanted the reply to do: {', '.join(profile.wanted_behaviors)}")
    parts = [
        "What this person told us about this moment, quoted between <participant> tags:",
        delimit("participant", "\n".join(facts) or NOTHING_TOLD),
    ]
    if references and profile.chosen:
        parts += ["A reply this person preferred here:", delimit("preferred_reply", profile.chosen)]
    if references and profile.rejected:
        parts += ["A reply this person rejected here:", delimit("rejected_reply", profile.rejected)]
    return "\n".join(parts) + "\n"


def hint_reference(profile: Profile, *, references: bool) -> dict[str, str]:
    """What the proxy judge reads (`TaskHint.reference`), on the same footing as the prompt."""
    reference = {"wanted": profile.wanted}
    if references:
        reference.update(chosen=profile.chosen, rejected=profile.rejected)
    return {key: value for key, value in reference.items() if value}


def rendered(messages: list[Message]) -> str:
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)


@dataclass(frozen=True, slots=True)
class JudgeContext:
    """Everything about an item a judge call needs, rendered once."""

    item: Item
    conversation: str
    history: tuple[tuple[str, str], ...]
    user_text: str
    profile: Profile

    @classmethod
    def at(cls, item: Item, turn_index: int, profile: Profile) -> JudgeContext:
        conversation = item.conversation
        return cls(
            item=item,
            conversation=transcript(h.history_through(conversation, turn_index)),
            history=h.hint_history(h.history_before(conversation, turn_index)),
            user_text=h.turn_at(conversation, turn_index).user,
            profile=profile,
        )


@dataclass(frozen=True, slots=True)
class JudgeCall:
    judge: str
    label: str
    verdict: Verdict
    result: CallResult
    parsed: PairwiseVerdict | RubricVerdict | None  # None unless the verdict is ok


async def _call(
    caller: Caller,
    judge: str,
    context: JudgeContext,
    template: PromptTemplate,
    messages: list[Message],
    hint: TaskHint,
    label: str,
) -> JudgeCall:
    result = await caller.call(
        judge, messages, prompt=template.info, item=context.item,
        role="judge", params=JUDGE_PARAMS, hint=hint,
    )  # fmt: skip
    mode: Literal["pairwise", "rubric"] = "pairwise" if hint.kind == "judge_pairwise" else "rubric"
    parsed: PairwiseVerdict | RubricVerdict | None = None
    status: Status = "failed"
    if result.text is not None:
        try:
            parse = parse_pairwise if mode == "pairwise" else parse_rubric
            parsed = parse(result.text)
            status = "ok"
        except InvalidAnswer:
            status = "invalid"
    verdict = Verdict(
        judge=judge, prompt_id=template.id, prompt_version=template.info.version, mode=mode,
        order=label, rendered_prompt=rendered(messages), raw_output=result.text or "",
        parsed=None if parsed is None else vars_of(parsed), status=status,
    )  # fmt: skip
    return JudgeCall(judge, label, verdict, result, parsed)


def vars_of(parsed: PairwiseVerdict | RubricVerdict) -> dict[str, Any]:
    if isinstance(parsed, PairwiseVerdict):
        return {"winner": parsed.winner, "reason": parsed.reason}
    return {"score": parsed.score, "reason": parsed.reason}


async def judge_pair(
    caller: Caller, judge: str, context: JudgeContext, a: str, b: str, label: str
) -> JudgeCall:
    """Ask `judge` which of A and B this participant would have found better."""
    template = pairwise_prompt()
    messages = template.render(
        conversation=context.conversation,
        participant=participant_block(context.profile, references=False),
        reply_a=delimit("reply_a", a),
        reply_b=delimit("reply_b", b),
    )
    hint = TaskHint(
        kind="judge_pairwise", text=context.user_text, candidates={"A": a, "B": b},
        history=context.history, reference=hint_reference(context.profile, references=False),
        item_key=f"{context.item.key}|{label}",
    )  # fmt: skip
    return await _call(caller, judge, context, template, messages, hint, label)


async def judge_reply(
    caller: Caller, judge: str, context: JudgeContext, reply: str, label: str = "rubric"
) -> JudgeCall:
    """Ask `judge` for an absolute 1-10 score of one reply for this participant."""
    template = rubric_prompt()
    messages = template.render(
        conversation=context.conversation,
        participant=participant_block(context.profile, references=True),
        reply=delimit("reply", reply),
    )
    hint = TaskHint(
        kind="judge_rubric", text=context.user_text, candidates={"A": reply},
        history=context.history, reference=hint_reference(context.profile, references=True),
        item_key=f"{context.item.key}|{label}",
    )  # fmt: skip
    return await _call(caller, judge, context, template, messages, hint, label)
