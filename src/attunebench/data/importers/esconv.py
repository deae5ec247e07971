"""ESConv: emotional-support chats between a seeker (the user) and a trained supporter.

Variants (esconv/SOURCE.md; `_esconv_files` reads them): `hf`, the Hugging Face splits;
`failed`, FailedESConv.json, with the seeker's per-turn feedback; `multiesc`, valid/test with
the feedback MultiESC restored (text and strategies from the HF split it was made from, since
MultiESC's are tokenised and re-labelled).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from attunebench.data.importers._base import (
    Split,
    Tally,
    choose,
    conversation,
    label,
    splits_for,
    text,
)
from attunebench.data.importers._dialogue import Utterance, build_dialogue
from attunebench.data.importers._esconv_files import (
    Session,
    failed_sessions,
    hf_sessions,
    multiesc_sessions,
)
from attunebench.data.schema import Conversation, Source, State, Taxonomy
from attunebench.data.taxonomy import load_taxonomy

SPLITS: dict[str, tuple[str, ...]] = {
    "hf": ("train", "valid", "test"),
    "failed": ("all",),
    "multiesc": ("valid", "test"),
}
TAXONOMY_ID = "esconv"

_CITATION = (
    "Liu, Zheng, Demasi, Sabour, Li, Yu, Jiang, Huang. Towards Emotional Support Dialog Systems. "
    "ACL 2021. arXiv:2106.01144."
)
_MULTIESC_CITATION = (
    " Cheng et al. Improving Multi-turn Emotional Support Dialogue Generation with Lookahead "
    "Strategy Planning. EMNLP 2022."
)
_NOTES = (
    "Seeker = user; each supporter reply is the response. Response behaviors are the actor's "
    "labels, not the seeker's: supporters tagged their own replies with a strategy. "
    "Consecutive utterances of one side are merged (newline-joined; a merged reply carries the "
    "union of its strategies); supporter utterances before the seeker's first message become "
    "context.opening and their strategies are not kept. emotion_type is the seeker's "
    "conversation-level emotion (context.emotion), not a per-turn state; problem_type and "
    "experience_type are context.labels. The pre-chat emotion intensity is the first turn's "
    "state.intensity; the post-chat intensity is outcome.final_state.intensity (reported after "
    "the chat, not at its last message); the seeker's empathy and relevance ratings of the "
    "supporter and their comments are outcome.survey. The supporter's own survey answers are not "
    "imported: outcome is the seeker's."
)
_FEEDBACK_NOTES = (
    " Seeker feedback (1-5) is the feedback of the turn that gave it and the rating of every "
    "supporter reply since the seeker's previous feedback, because ESConv asked seekers to rate "
    "the supporter after every few new supporter messages; replies after the last feedback have "
    "no rating."
)


def _source(variant: str) -> Source:
    provenance = {
        "context.emotion": "first-person",
        "state.intensity": "first-person",
        "behaviors": "actor",
        "outcome": "first-person",
    }
    fields: dict[str, object] = {
        "kind": "imported",
        "name": "ESConv",
        "license": "CC BY-NC 4.0 (academic research use only)",
        "url": "https://huggingface.co/datasets/thu-coai/esconv",
        "citation": _CITATION,
        "provenance": provenance,
        "notes": _NOTES,
    }
    if variant != "hf":
        fields["provenance"] = {**provenance, "rating": "first-person"}
        fields["rating_scale"] = {
            "low": 1,
            "high": 5,
            "description": "the seeker's feedback on the supporter's recent replies",
        }
    if variant == "failed":
        fields["name"] = "FailedESConv"
        fields["url"] = "https://github.com/thu-coai/Emotional-Support-Conversation"
        fields["notes"] = "Conversations ESConv dropped as failed. " + _NOTES + _FEEDBACK_NOTES
    elif variant == "multiesc":
        fields["name"] = "ESConv+MultiESC"
        fields["url"] = "https://github.com/lwgkzl/MultiESC"
        fields["citation"] = _CITATION + _MULTIESC_CITATION
        fields["notes"] = (
            "ESConv HF valid/test dialogues with the seeker feedback MultiESC restored; "
            "MultiESC's tokenised text, renamed strategies and machine-generated vad/cause are "
            "not used. " + _NOTES + _FEEDBACK_NOTES
        )
    return Source.model_validate(fields)


def _utterances(session: Session, taxonomy: Taxonomy, tally: Tally) -> list[Utterance]:
    utterances = []
    for line in session.lines:
        tally["utterances:seeker" if line.is_user else "utterances:supporter"] += 1
        behaviors: tuple[str, ...] = ()
        if line.strategy is not None:
            tally[f"strategy:{line.strategy}"] += 1
            mapped = label(
                taxonomy, "behaviors", line.strategy, session.location, line.strategy_field
            )
            behaviors = (mapped,)
        if line.feedback is not None:
            tally[f"feedback:{line.feedback}"] += 1
        utterances.append(
            Utterance(
                is_user=line.is_user,
                text=text(line.text, session.location, line.field),
                behaviors=behaviors,
                feedback=None if line.feedback is None else float(line.feedback),
            )
        )
    return utterances


def _survey(session: Session, tally: Tally) -> dict[str, str | float]:
    meta, seeker = session.meta, session.meta.survey_score.seeker
    survey: dict[str, str | float] = {}
    for key, value in (("empathy", seeker.empathy), ("relevance", seeker.relevance)):
        if value is not None:
            tally[f"{key}:{value}"] += 1
            survey[key] = float(value)
    comments = {
        "seeker_question1": meta.seeker_question1,
        "seeker_question2": meta.seeker_question2,
    }
    survey.update(
        {key: value.strip() for key, value in comments.items() if value and value.strip()}
    )
    # The supporter's answers are the other party's view; `outcome` holds the seeker's alone.
    supporter = [meta.supporter_question1, meta.supporter_question2]
    given = len(meta.survey_score.supporter) + sum(1 for v in supporter if v and v.strip())
    tally["dropped:supporter survey answers"] += given
    return survey


def _conversation(
    conversation_id: str, session: Session, source: Source, taxonomy: Taxonomy, tally: Tally
) -> Conversation | None:
    meta, seeker = session.meta, session.meta.survey_score.seeker
    tally["dialogues"] += 1
    tally[f"emotion_type:{meta.emotion_type}"] += 1
    tally[f"problem_type:{meta.problem_type}"] += 1
    dialogue = build_dialogue(
        _utterances(session, taxonomy, tally), reply_id="supporter", tally=tally
    )
    if not dialogue.turns:
        tally["dropped:dialogues without a seeker message"] += 1
        return None
    turns = list(dialogue.turns)
    if seeker.initial_emotion_intensity is not None:
        tally[f"initial_intensity:{seeker.initial_emotion_intensity}"] += 1
        turns[0] = turns[0].model_copy(
            update={"state": State(intensity=seeker.initial_emotion_intensity)}
        )
    final = seeker.final_emotion_intensity
    if final is not None:
        tally[f"final_intensity:{final}"] += 1
    survey = _survey(session, tally)
    labels = {"problem_type": meta.problem_type, "experience_type": meta.experience_type}
    return conversation(
        session.location,
        id=conversation_id,
        source=source,
        taxonomy=TAXONOMY_ID,
        context={
            "situation": (meta.situation or "").strip() or None,
            "emotion": label(
                taxonomy, "emotions", meta.emotion_type, session.location, "emotion_type"
            ),
            "opening": dialogue.opening,
            "labels": {key: value for key, value in labels.items() if value},
        },
        turns=turns,
        outcome=None
        if final is None and not survey
        else {
            "final_state": None if final is None else {"intensity": final},
            "survey": survey,
        },
    )


@dataclass(frozen=True)
class ESConvImporter:
    """ESConv support chats: supporters' own strategy labels, the seeker's survey and feedback."""

    # Each field is an option of `data import esconv`, its help beside it (cli.options reads it).
    variant: Annotated[
        Literal["hf", "failed", "multiesc"],
        "hf: the HF splits; failed: FailedESConv.json; "
        "multiesc: valid/test with MultiESC's seeker feedback.",
    ] = "hf"
    split: Split = "all"

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        variant = choose("variant", self.variant, tuple(SPLITS))
        splits = splits_for(self.split, SPLITS[variant])
        record_source, taxonomy = _source(variant), load_taxonomy(TAXONOMY_ID)
        for split in splits:
            if variant == "failed":
                sessions, prefix = failed_sessions(source / "FailedESConv.json"), "esconv-failed"
            elif variant == "multiesc":
                sessions, prefix = multiesc_sessions(source, split), f"esconv-multiesc-{split}"
            else:
                sessions, prefix = hf_sessions(source / f"{split}.jsonl"), f"esconv-{split}"
            for number, session in enumerate(sessions):
                made = _conversation(
                    f"{prefix}-{number:04d}", session, record_source, taxonomy, tally
                )
                if made is not None:
                    yield made
