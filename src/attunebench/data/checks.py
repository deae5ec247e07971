"""Checks on one decoded JSON record: the schema, then the rules a schema cannot say (docs/data.md
lists them).

`check_record` never raises on bad input: everything wrong comes back as `Finding`s, which
`validate` turns into file/line problems. The rules run on the record as `salvage` rebuilds it
from its valid parts, so a schema error hides no rule broken on the same line; a rule finding
about a value salvage stood in for is left out, since the schema finding already names it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import ValidationError

from attunebench.data.derived import off_scale
from attunebench.data.salvage import Path, salvage, under
from attunebench.data.schema import (
    LABELLED_FIELDS,
    Conversation,
    Outcome,
    Probe,
    RatingScale,
    Source,
    State,
    Taxonomy,
    Turn,
)
from attunebench.data.schema_errors import (
    Finding,
    field_parts,
    json_type,
    located,
    schema_findings,
)
from attunebench.data.taxonomy import UnknownTaxonomyError, load_taxonomy


def resolve_taxonomy(obj: dict[str, Any]) -> tuple[Taxonomy | None, list[Finding]]:
    raw = obj.get("taxonomy")
    if isinstance(raw, str) and raw:
        try:
            return load_taxonomy(raw), []
        except UnknownTaxonomyError as exc:
            return None, [Finding(str(exc), None, "taxonomy")]
    if isinstance(raw, dict):
        try:
            return Taxonomy.model_validate(raw), []
        except ValidationError:
            return None, []  # the schema findings already say what is wrong with it
    return None, []


def _label(
    where: tuple[str | int, ...], value: str | None, taxonomy: Taxonomy | None, kind: str
) -> Iterator[Finding]:
    """`value` (an emotion or behavior label) where the taxonomy, if known, lacks it."""
    if taxonomy is None or value is None:
        return
    known = taxonomy.emotion_names() if kind == "emotion" else taxonomy.behavior_names()
    if value not in known:
        yield located(where, f"{kind} {value!r} is not in taxonomy {taxonomy.id!r}")


def _labels(
    where: tuple[str | int, ...], values: Sequence[str], taxonomy: Taxonomy | None, kind: str
) -> Iterator[Finding]:
    for position, value in enumerate(values):
        yield from _label((*where, position), value, taxonomy, kind)


def state_findings(
    where: tuple[str | int, ...], state: State, taxonomy: Taxonomy | None
) -> Iterator[Finding]:
    yield from _labels((*where, "emotions"), state.emotions, taxonomy, "emotion")
    yield from _label((*where, "primary"), state.primary, taxonomy, "emotion")
    if state.primary is not None and state.emotions and state.primary not in state.emotions:
        yield located(
            (*where, "primary"), f"primary {state.primary!r} is not among the state's emotions"
        )
    seen: set[str] = set()
    for position, emotion in enumerate(state.emotions):
        if emotion in seen:
            yield located((*where, "emotions", position), f"emotion {emotion!r} is listed twice")
        seen.add(emotion)


def _blank(where: tuple[str | int, ...], text: str) -> Iterator[Finding]:
    if not text.strip():
        yield located(where, "text is only whitespace")


def _on_scale(
    where: tuple[str | int, ...], rating: float | None, scale: RatingScale | None
) -> Iterator[Finding]:
    if scale is not None and rating is not None and not scale.low <= rating <= scale.high:
        yield located(
            where, f"rating {rating} is outside the source's scale {scale.low}..{scale.high}"
        )


def _response_named(
    where: tuple[str | int, ...], named: str | None, ids: set[str], turn: str = "this turn"
) -> Iterator[Finding]:
    if named is not None and named not in ids:
        yield located(where, f"names response {named!r}, which {turn} does not have")


def turn_findings(
    position: int, turn: Turn, taxonomy: Taxonomy | None, source: Source
) -> Iterator[Finding]:
    where: tuple[str | int, ...] = ("turns", position)
    yield from _blank((*where, "user"), turn.user)
    if turn.state is not None:
        yield from state_findings((*where, "state"), turn.state, taxonomy)
    ids: set[str] = set()
    for r_pos, response in enumerate(turn.responses):
        at = (*where, "responses", r_pos)
        if response.id in ids:
            yield located((*at, "id"), f"response id {response.id!r} is used twice in this turn")
        ids.add(response.id)
        yield from _blank((*at, "text"), response.text)
        yield from _labels((*at, "behaviors"), response.behaviors, taxonomy, "behavior")
        yield from _on_scale((*at, "rating"), response.rating, source.rating_scale)
    yield from _on_scale((*where, "feedback"), turn.feedback, source.rating_scale)
    preference = turn.preference
    if preference is not None:
        yield from _response_named((*where, "preference", "chosen"), preference.chosen, ids)
        if preference.chosen is not None and preference.tie:
            yield located((*where, "preference"), "cannot both choose a response and declare a tie")
        comments = preference.comment_behaviors
        yield from _labels(
            (*where, "preference", "comment_behaviors"), comments, taxonomy, "behavior"
        )
    if turn.need is not None:
        yield from _labels((*where, "need", "behaviors"), turn.need.behaviors, taxonomy, "behavior")
    yield from _response_named((*where, "continued"), turn.continued, ids)


def probe_findings(
    position: int, probe: Probe, turns: dict[int, Turn], taxonomy: Taxonomy | None
) -> Iterator[Finding]:
    where: tuple[str | int, ...] = ("probes", position)
    if (probe.state is None) == (probe.preference is None):
        yield located(where, "a probe holds one repeat answer: state or preference")
    if probe.after < probe.turn:
        yield located((*where, "after"), f"{probe.after} is before the turn it re-asks")
    turn = turns.get(probe.turn)
    if turn is None:
        yield located((*where, "turn"), f"names turn {probe.turn}, which the conversation lacks")
    if probe.state is not None:
        yield from state_findings((*where, "state"), probe.state, taxonomy)
    preference = probe.preference
    if preference is None:
        return
    if preference.chosen is not None and preference.tie:
        yield located((*where, "preference"), "cannot both choose a response and declare a tie")
    if turn is not None:
        ids = {response.id for response in turn.responses}
        at = (*where, "preference", "chosen")
        yield from _response_named(at, preference.chosen, ids, f"turn {probe.turn}")


def _turn_order(indices: Sequence[int | None]) -> Iterator[Finding]:
    previous: int | None = None
    for position, index in enumerate(indices):
        if index is None:
            continue
        if previous is not None and index <= previous:
            word = "repeats" if index == previous else "comes after"
            message = f"index {index} {word} index {previous}; indices must increase"
            yield located(("turns", position, "index"), message)
        previous = index if previous is None else max(previous, index)


def _raw_index(raw: object) -> int | None:
    index = raw.get("index") if isinstance(raw, dict) else None
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def _source_findings(source: Source) -> Iterator[Finding]:
    for key in source.provenance:
        if key not in LABELLED_FIELDS:
            known = ", ".join(LABELLED_FIELDS)
            yield Finding(
                f"names unknown labelled field {key!r} (known: {known})",
                None,
                f"source.provenance.{key}",
            )


def _suppressed(finding: Finding, touched: set[Path]) -> bool:
    """Whether a rule finding is about a value salvage stood in for (the schema named it)."""
    path: Path = () if finding.turn is None else ("turns", finding.turn)
    return under(path + field_parts(finding.field), touched)


def check_record(obj: object) -> tuple[Conversation | None, list[Finding]]:
    """Validate one decoded JSON line; returns the conversation (if valid) and every finding."""
    if not isinstance(obj, dict):
        return None, [
            Finding(f"a line must be a JSON object (one conversation), got {json_type(obj)}")
        ]
    findings: list[Finding] = []
    try:
        conversation: Conversation | None = Conversation.model_validate(obj)
    except ValidationError as exc:
        conversation = None
        findings += schema_findings(obj, exc)
    taxonomy, tax_findings = resolve_taxonomy(obj)
    findings += tax_findings
    # The rules run on what is valid of the record, so a schema error hides none of them.
    salvaged, touched = (conversation, set()) if conversation else salvage(Conversation, obj)
    raw_turns = obj.get("turns")
    indices = [_raw_index(t) for t in raw_turns] if isinstance(raw_turns, list) else []
    findings += [
        f for f in _rule_findings(salvaged, taxonomy, indices) if not _suppressed(f, touched)
    ]
    return (conversation if not findings else None), findings


def _rule_findings(
    conversation: Conversation, taxonomy: Taxonomy | None, indices: list[int | None]
) -> Iterator[Finding]:
    source, context = conversation.source, conversation.context
    if not conversation.turns:
        yield Finding("a conversation needs at least one turn", None, "turns")
    yield from _source_findings(source)
    yield from _label(("context", "emotion"), context.emotion, taxonomy, "emotion")
    yield from _turn_order(indices)
    for position, turn in enumerate(conversation.turns):
        yield from turn_findings(position, turn, taxonomy, source)
    outcome = conversation.outcome
    if outcome is not None and outcome.final_state is not None:
        yield from state_findings(("outcome", "final_state"), outcome.final_state, taxonomy)
    turns = {turn.index: turn for turn in conversation.turns}
    for position, probe in enumerate(conversation.probes):
        yield from probe_findings(position, probe, turns, taxonomy)
    if outcome is not None:
        yield from outcome_scale_findings(outcome)


def outcome_scale_findings(outcome: Outcome) -> Iterator[Finding]:
    """Each outcome number off its scale, and each declared scale not running low to high."""
    upside_down = {name for name, scale in outcome.scales.items() if scale.low >= scale.high}
    for name in upside_down:
        scale = outcome.scales[name]
        yield Finding(
            f"scale {scale.low:g}..{scale.high:g} does not run from low to high",
            None,
            f"outcome.scales.{name}",
        )
    for path, value, (low, high) in off_scale(outcome):
        name = path.removeprefix("survey.")
        if name in upside_down:  # said once, of the scale
            continue
        message = f"{value:g} is outside its declared scale {low:g}..{high:g}"
        if name not in outcome.scales:
            message = (
                f"{value:g} is outside {low:g}..{high:g}, the scale an undeclared answer is "
                f"scored on (declare its scale as outcome.scales.{name})"
            )
        yield Finding(message, None, f"outcome.{path}")
