"""Collected conversations as attunebench/v1 records, checked by the dataset validator
(docs/collecting.md, "8. Export"). Response ids never name the model (it sits in the hidden
`model` field); simulated participants' labels are `simulated`, not first-person.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, cast

from attunebench.collect.models import ParticipantRow, ProbeRow, TurnRow
from attunebench.collect.quality import careless
from attunebench.collect.questions import ATTENTION_CHECK
from attunebench.collect.study import Study
from attunebench.collect.timing import minutes_spent
from attunebench.data import schema
from attunebench.data.careless import CARELESS
from attunebench.data.jsonl import write_conversations
from attunebench.data.validate import FileReport, validate_file

LABELLED = ("state", "state.intensity", "behaviors", "preference", "need", "outcome")


def response_id(conversation_id: str, turn_index: int, position: str) -> str:
    return f"{conversation_id}-t{turn_index}-{position.lower()}"


def _state(raw: dict[str, Any] | None) -> schema.State | None:
    return schema.State.model_validate(raw) if raw else None


def _turn(conversation_id: str, row: TurnRow) -> schema.Turn:
    responses = tuple(
        schema.Response(
            id=response_id(conversation_id, row.index, reply.position),
            model=reply.model,
            text=reply.text,
            behaviors=tuple(reply.behaviors or ()),
            flags=tuple(reply.flags),
        )
        for reply in row.replies
    )
    preference = continued = None
    if row.choice is not None:
        continued = response_id(conversation_id, row.index, row.continued or row.choice)
        preference = _preference(
            conversation_id,
            row.index,
            row.choice,
            strength=row.strength,
            comment=row.comment,
            comment_behaviors=tuple(row.comment_behaviors or ()),
        )
    need = None
    if row.need_text or row.need_behaviors:
        need = schema.Need(text=row.need_text, behaviors=tuple(row.need_behaviors or ()))
    return schema.Turn(
        index=row.index,
        user=row.user_text,
        state=_state(row.state),
        responses=responses,
        need=need,
        preference=preference,
        continued=continued,
        # How the conversation went on: the participant's pick, or a draw between tied replies.
        continued_by=cast(Literal["pick", "random"] | None, row.continued_by),
    )


def _probe(conversation_id: str, row: ProbeRow) -> schema.Probe:
    """A question asked again, in the turn's own terms: never gold (see `schema.Probe`)."""
    return schema.Probe(
        turn=row.turn_index,
        after=row.asked_after,
        state=schema.State.model_validate(row.state) if row.state is not None else None,
        preference=_preference(conversation_id, row.turn_index, row.choice) if row.choice else None,
    )


def _preference(conversation_id: str, turn: int, choice: str, **more: Any) -> schema.Preference:
    """A pick in the turn's own positions: a tie chooses no response."""
    tie = choice == "tie"
    chosen = None if tie else response_id(conversation_id, turn, choice)
    return schema.Preference(chosen=chosen, tie=tie, **more)


def _outcome(participant: ParticipantRow, study: Study) -> schema.Outcome | None:
    if participant.finished_at is None:
        return None
    survey = dict(participant.survey or {})
    survey.pop(ATTENTION_CHECK, None)  # an instruction followed or not, not an outcome
    rating = survey.get(study.end.rating_question) if study.end.rating_question else None
    return schema.Outcome(
        final_state=_state(participant.final_state),
        rating=float(rating) if isinstance(rating, int | float) else None,
        survey=survey,
        scales=_scales(study),
    )


def _scales(study: Study) -> dict[str, schema.RatingScale]:
    """The scale of each scale question (and of the rating, its question's), where it is not
    the 1-5 that an outcome field is taken on without one."""
    scales = {
        question.id: schema.RatingScale(low=question.min, high=question.max)
        for question in study.end.questions
        if question.kind == "scale" and (question.min, question.max) != (1, 5)
    }
    rating = scales.get(study.end.rating_question or "")
    return scales if rating is None else {**scales, "rating": rating}


def conversation(participant: ParticipantRow, study: Study) -> schema.Conversation:
    conversation_id = f"{study.id}-{participant.public_id}"
    safety_turns = [str(t.index) for t in participant.turns if t.safety_notice]
    labels = {"status": "finished" if participant.finished_at else "incomplete"}
    # What the conversation cost the participant, in minutes (what pay is set from).
    labels["duration_minutes"] = f"{minutes_spent(participant):.2f}"
    held = participant.careless_signals or []
    labels[CARELESS] = "yes" if careless(held, study.quality) else "no"
    if held:
        labels["careless_signals"] = ",".join(held)
    if safety_turns:
        labels["safety_notice_turns"] = ",".join(safety_turns)
    simulated = participant.enrolment == "simulated"
    return schema.Conversation(
        id=conversation_id,
        source=schema.Source(
            kind="simulated" if simulated else "collected",
            name=study.id,
            license=study.license,
            provenance=dict.fromkeys(LABELLED, "simulated" if simulated else "first-person"),
            notes=f"{study.name} (simulated participants)" if simulated else study.name,
        ),
        participant=schema.Participant(
            id=participant.public_id, traits=dict(participant.traits or {})
        ),
        taxonomy=study.taxonomy_inline or study.taxonomy,
        context=schema.Context(labels=labels),
        turns=tuple(_turn(conversation_id, t) for t in participant.turns),
        outcome=_outcome(participant, study),
        probes=tuple(_probe(conversation_id, probe) for probe in participant.probes),
    )


def export_file(
    path: str | Path,
    participants: list[ParticipantRow],
    study: Study,
    finished_only: bool = False,
    simulated: bool = True,
) -> FileReport | None:
    """Write the JSON Lines file atomically and validate it (no report for an empty export): one
    record per participant who wrote a message (and finished, and was not simulated, if asked)."""
    chosen = (
        conversation(participant, study)
        for participant in participants
        if participant.turns
        and (participant.finished_at is not None or not finished_only)
        and (participant.enrolment != "simulated" or simulated)
    )
    return validate_file(path) if write_conversations(path, chosen) else None
