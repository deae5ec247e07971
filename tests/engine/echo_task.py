"""A minimal task for testing the engine: one call per user turn, plus one per judge.

It is a real `Task` (tasks/base.py), so the engine evaluates it the way it evaluates every
task; it is not part of the package, and not registered. The subject's hint carries the item's
own key, so a scripted mock addresses an item as `echo|<conversation>|<turn>|reply|`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from attunebench.answerform import AnswerForm, TaskHint
from attunebench.data.schema import Conversation
from attunebench.data.taxonomy import taxonomy_of
from attunebench.frozen import Frozen
from attunebench.judge.forms import RUBRIC_ANSWERS
from attunebench.models.base import GenerateParams, Message
from attunebench.prompts import PromptTemplate
from attunebench.tasks.base import (
    AnswerMode,
    Gold,
    InvalidAnswer,
    Item,
    JudgedVerdict,
    Output,
    Query,
    Scored,
    Task,
)
from attunebench.tasks.response import ANSWERS as RESPONSE_ANSWERS

PROMPT = PromptTemplate("echo", "1", "the user's turn, sent as it is", system="", user="")
JUDGE_PROMPT = PromptTemplate("echo-judge", "1", "the reply, sent to the judge", system="", user="")
PARAMS = GenerateParams()


class EchoGold(Gold):
    """No gold beyond the turn: any non-empty reply is right."""


class EchoPrediction(Frozen):
    reply: str


class EchoTask(Task[EchoGold, EchoPrediction]):
    name = "echo"
    subject_forms = (RESPONSE_ANSWERS,)
    templates = (PROMPT, JUDGE_PROMPT)

    @property
    def judge_forms(self) -> tuple[AnswerForm, ...]:
        return (RUBRIC_ANSWERS,)

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item[EchoGold]]:
        for conversation in conversations:
            taxonomy = taxonomy_of(conversation)
            for turn in conversation.turns:
                yield Item(self.name, conversation, turn.index, "reply", taxonomy, EchoGold())

    def queries(self, item: Item[EchoGold], mode: AnswerMode) -> list[Query]:
        turn = next(t for t in item.conversation.turns if t.index == item.turn_index)
        hint = TaskHint("response", text=turn.user, item_key=item.key, form=RESPONSE_ANSWERS)
        return [Query("reply", [Message("user", turn.user)], PROMPT.info, PARAMS, hint)]

    def parse(self, item: Item[EchoGold], outputs: Mapping[str, Output]) -> EchoPrediction:
        text = outputs["reply"].text or ""
        if not text.strip():
            raise InvalidAnswer("an empty reply")
        return EchoPrediction(reply=text)

    def score(self, item: Item[EchoGold], prediction: EchoPrediction) -> Scored:
        return Scored(1.0)

    def judge_queries(
        self, item: Item[EchoGold], prediction: EchoPrediction, judges: Sequence[str]
    ) -> list[Query]:
        hint = TaskHint(
            "judge_rubric",
            text=prediction.reply,
            candidates={"A": prediction.reply},
            form=RUBRIC_ANSWERS,
        )
        messages = [Message("user", f"Rate: {prediction.reply}")]
        return [
            Query(f"judge:{judge}", messages, JUDGE_PROMPT.info, PARAMS, hint, "judge", judge)
            for judge in judges
        ]

    def judged(
        self, item: Item[EchoGold], prediction: EchoPrediction, verdicts: Sequence[JudgedVerdict]
    ) -> Scored:
        return self.score(item, prediction)


class OtherTask(EchoTask):
    """The echo task under another name, for tests that need two tasks."""

    name = "other"
