"""`intense`: a toy yes/no task, declared in this module and its prompt file only, to show
that a new task needs nothing else: was the user's feeling intense (4 or 5 of 5) at a turn
where they reported its intensity? Asked in generate form or as a choice (yes or no, the
probability of each key). Score 1 for the right answer, 0 otherwise."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from attunebench import tasks
from attunebench.answerform import AnswerForm, Schema, TaskHint, dumps, obj, one_of, registered
from attunebench.data.schema import Conversation
from attunebench.frozen import Frozen
from attunebench.tasks.helpers import history, metrics, prompting

TASK = "intense"
PROMPT = tasks.task_prompt(__name__, "intense")
CHOICE = tasks.task_prompt(__name__, "intense-choice")
OPTIONS = [("yes", "Yes"), ("no", "No")]


class IntenseGold(tasks.Gold):
    intense: bool


class IntensePrediction(Frozen):
    intense: bool


class IntenseAnswers(AnswerForm):
    kind = TASK
    marker = '{"intense"'

    def example(self, hint: TaskHint) -> str:
        return dumps({"intense": "no"})

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        return dumps({"intense": "yes" if rng.random() < 0.5 else "no"})

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        return dumps({"intense": "yes" if gold["intense"] == right else "no"})

    def schema(self, hint: TaskHint) -> Schema:
        return obj({"intense": one_of(("yes", "no"))})


ANSWERS = registered(IntenseAnswers())


class IntenseScoring(tasks.Scoring[IntenseGold, IntensePrediction]):
    headline = "accuracy"

    def choice_gold(self, item: tasks.Item[IntenseGold], query: tasks.Query) -> str:
        return "yes" if item.gold.intense else "no"

    metrics = metrics.register(TASK, metrics.column_metric("score", headline))


class IntenseTask(tasks.Task[IntenseGold, IntensePrediction], scoring=IntenseScoring):
    name = TASK
    gold_fields = ("state.intensity",)
    subject_forms = (ANSWERS,)
    answer_modes = ("generate", "choice")
    templates = (PROMPT, CHOICE)

    def items(self, conversations: Iterable[Conversation]) -> Iterator[tasks.Item[IntenseGold]]:
        for conversation in conversations:
            for turn in conversation.turns:
                if turn.state is not None and turn.state.intensity is not None:
                    gold = IntenseGold(intense=turn.state.intensity >= 4)
                    yield from tasks.in_contexts(self, conversation, turn.index, "state", gold)

    def queries(self, item: tasks.Item[IntenseGold], mode: tasks.AnswerMode) -> list[tasks.Query]:
        said = history.history_through(item.conversation, item.turn_index)
        messages = PROMPT.render(conversation=prompting.transcript(said))
        hint = TaskHint(TASK, text=said[-1].text, form=ANSWERS)
        if mode == "generate":
            return [tasks.Query("answer", messages, PROMPT.info, hint=hint)]
        asked = CHOICE.render(conversation=prompting.transcript(said))
        choice = prompting.choice_form(asked, CHOICE.text("question"), OPTIONS)
        return [tasks.Query("answer", messages, CHOICE.info, hint=hint, choice=choice)]

    def parse(
        self, item: tasks.Item[IntenseGold], outputs: Mapping[str, tasks.Output]
    ) -> IntensePrediction:
        spread = outputs["answer"].probabilities
        if spread is not None:  # choice: "A" is yes, "B" no
            return IntensePrediction(intense=spread.get("A", 0.0) >= spread.get("B", 0.0))
        said = tasks.answer_fields(outputs["answer"].text or "").get("intense")
        if said not in ("yes", "no"):
            raise tasks.InvalidAnswer("the answer has no 'intense': yes or no")
        return IntensePrediction(intense=said == "yes")

    def score(self, item: tasks.Item[IntenseGold], prediction: IntensePrediction) -> tasks.Scored:
        return tasks.Scored(float(prediction.intense == item.gold.intense))


@tasks.register_task(TASK)
def intense_task(seed: int = 0) -> IntenseTask:
    """Whether the user's feeling was intense (a toy task)."""
    return IntenseTask()
