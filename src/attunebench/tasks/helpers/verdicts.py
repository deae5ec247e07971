"""Reading a judge's answer into an auditable `Verdict`: a JSON object (pairwise winner or
rubric score), or in choice mode the probabilities of "A" and "B" (the more probable wins)."""

from __future__ import annotations

from typing import Any

from attunebench.records import Verdict
from attunebench.tasks.base import InvalidAnswer, Output, Query
from attunebench.tasks.helpers.judging import verdict_mode
from attunebench.tasks.helpers.parsing import a_b_tie, answer_fields, bounded_number, reason_of


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


def choice_winner(probabilities: dict[str, float]) -> dict[str, Any]:
    a, b = probabilities.get("A", 0.0), probabilities.get("B", 0.0)
    winner = "tie" if a == b else ("A" if a > b else "B")
    total = a + b
    return {"winner": winner, "p_a": a / total if total else 0.5, "reason": "choice probabilities"}


def rendered(query: Query) -> str:
    messages = query.choice.messages if query.choice is not None else query.messages
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)


def read_verdict(judge: str, query: Query, output: Output) -> Verdict:
    """The verdict of one judge query; never raises."""
    mode = verdict_mode(query)
    parsed: dict[str, Any] | None = None
    status: Any = "failed"
    if output.probabilities is not None:
        parsed, status = choice_winner(dict(output.probabilities)), "ok"
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
