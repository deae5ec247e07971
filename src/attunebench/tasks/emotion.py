"""`emotion`: name how the user felt at their message, against their own self-report.

Construct: emotion recognition in conversation (as in EmoryNLP/MELD-style ERC), but with
first-person gold: the person who wrote the message said how they felt. The model sees the
conversation up to and including the user's message at turn t and the taxonomy's labels with
descriptions; it names a primary label and every label that applies, and rates intensity
(1-5), valence (-1..1) and arousal (0..1).

Items: every user turn whose `state` has labels or numbers. Where a corpus has only a
conversation-level label (`context.emotion`), the first user turn carries it as gold, and the
record's `meta.gold_level` says "conversation" so reports can keep the two apart.

Per item: `score` is 1.0/0.0 for the primary label (when the participant listed several
emotions without a primary, naming any of them counts); `scores` adds the multi-label Jaccard
and the absolute error of each number (None where the gold has none). An invalid answer
scores 0.0 wherever the gold has a label. Corpus metrics are in `tasks.metrics`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from attunebench.data.schema import Conversation, Turn
from attunebench.data.taxonomy import taxonomy_of
from attunebench.models.hints import HintKind, TaskHint
from attunebench.records import ItemRecord, PromptInfo
from attunebench.tasks import history as h
from attunebench.tasks.base import TASKS, Caller, Item
from attunebench.tasks.common import JSON_PARAMS, record
from attunebench.tasks.parsing import EmotionAnswer, InvalidAnswer, parse_emotion
from attunebench.tasks.prompting import label_menu, self_reports_block, task_prompt, transcript
from attunebench.tasks.scoring import abs_error, jaccard

TASK = "emotion"
PROMPT = task_prompt("emotion")
GoldLevel = Literal["turn", "conversation"]
NUMBERS = ("intensity", "valence", "arousal")


@dataclass(frozen=True, slots=True)
class EmotionGold:
    primary: str | None
    emotions: tuple[str, ...]
    intensity: float | None
    valence: float | None
    arousal: float | None
    level: GoldLevel

    @property
    def labels(self) -> frozenset[str]:
        return frozenset((*self.emotions, *([self.primary] if self.primary else [])))

    def as_dict(self) -> dict[str, Any]:
        """Only what the gold has."""
        shown: dict[str, Any] = {"primary": self.primary, "emotions": list(self.emotions)}
        shown.update({name: getattr(self, name) for name in NUMBERS})
        return {key: value for key, value in shown.items() if value not in (None, [])}


def emotion_gold(conversation: Conversation, turn: Turn) -> EmotionGold | None:
    """The gold for one user turn, or None when it carries none."""
    state = turn.state
    primary = state.primary if state else None
    emotions = state.emotions if state else ()
    level: GoldLevel = "turn"
    first = conversation.turns[0].index
    if not (primary or emotions) and turn.index == first and conversation.context.emotion:
        primary, emotions, level = conversation.context.emotion, (), "conversation"
    if primary is None and len(emotions) == 1:
        primary = emotions[0]
    numbers = {name: getattr(state, name) if state else None for name in NUMBERS}
    if not (primary or emotions) and all(v is None for v in numbers.values()):
        return None
    return EmotionGold(primary, tuple(emotions), level=level, **numbers)


def score_emotion(answer: EmotionAnswer | None, gold: EmotionGold) -> dict[str, float | None]:
    """Per-item scores; `answer` None is an invalid answer (wrong wherever there is a label)."""
    correct: float | None = None
    overlap: float | None = None
    if gold.labels:
        if answer is None:
            correct, overlap = 0.0, 0.0
        else:
            hit = answer.primary == gold.primary if gold.primary else answer.primary in gold.labels
            correct, overlap = float(hit), jaccard(answer.emotions, gold.labels)
    errors = {
        f"{name}_abs_error": abs_error(getattr(answer, name, None), getattr(gold, name))
        for name in NUMBERS
    }
    return {"primary_correct": correct, "jaccard": overlap, **errors}


@dataclass(frozen=True, slots=True)
class EmotionTask:
    context: str = h.DEFAULT_CONTEXT
    name: str = field(default=TASK, init=False)
    subject_hints: ClassVar[frozenset[HintKind]] = frozenset({"emotion"})

    @property
    def prompts(self) -> list[PromptInfo]:
        return [PROMPT.info]

    @property
    def options(self) -> dict[str, Any]:
        return {"context": self.context}

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item]:
        modes = h.context_modes(self.context)
        for conversation in conversations:
            taxonomy = taxonomy_of(conversation)
            for turn in conversation.turns:
                gold = emotion_gold(conversation, turn)
                if gold is None:
                    continue
                for mode in modes:
                    yield Item(TASK, conversation, turn.index, gold.level, taxonomy, mode)

    async def evaluate(
        self, item: Item, model: str, caller: Caller, judges: list[str]
    ) -> ItemRecord:
        conversation, taxonomy = item.conversation, item.taxonomy
        turn = h.turn_at(conversation, item.turn_index)
        gold = emotion_gold(conversation, turn)
        if gold is None:
            raise ValueError(f"{item.key}: the turn carries no emotion gold")
        mode: h.ContextMode = "informed" if item.variant == "informed" else "blind"
        messages = PROMPT.render(
            conversation=transcript(h.history_through(conversation, turn.index)),
            self_reports=self_reports_block(mode, h.self_reports_before(conversation, turn.index)),
            labels=label_menu(taxonomy.emotions),
        )
        hint = TaskHint(
            kind="emotion",
            text=turn.user,
            labels=tuple(label.name for label in taxonomy.emotions),
            history=h.hint_history(h.history_before(conversation, turn.index)),
            item_key=item.key,
        )
        result = await caller.call(
            model, messages, prompt=PROMPT.info, item=item, params=JSON_PARAMS, hint=hint
        )
        common: dict[str, Any] = {"gold": gold.as_dict(), "meta": {"gold_level": gold.level}}
        if result.text is None:
            return record(item, model, "failed", [result], error=result.error, **common)
        try:
            answer = parse_emotion(result.text, taxonomy.emotions)
        except InvalidAnswer as invalid:
            scores = score_emotion(None, gold)
            return record(
                item, model, "invalid", [result], score=scores["primary_correct"],
                scores=scores, raw_output=result.text, error=str(invalid), **common,
            )  # fmt: skip
        scores = score_emotion(answer, gold)
        return record(
            item, model, "ok", [result], prediction=answer.as_dict(),
            score=scores["primary_correct"], scores=scores, raw_output=result.text, **common,
        )  # fmt: skip


@TASKS.register(TASK)
def emotion_task(context: str = h.DEFAULT_CONTEXT) -> EmotionTask:
    """Emotion recognition; `context` is blind (default), informed, or both."""
    h.context_modes(context)  # refuse a bad option when the plan is made, not mid-run
    return EmotionTask(context=context)
