"""What a simulated user is asked besides the tasks' questions, and what a valid answer is.

Each is an `AnswerForm`, so the stand-in providers answer it as a task's (`sim/person-oracle`
from the gold the hint carries): `simulated_message` (plain text), `simulated_label`,
`simulated_intensity` (1 to 5) and `simulated_grade` (on the source's scale).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from attunebench import answerform
from attunebench.answerform import TaskHint
from attunebench.tasks.base import Gold

INTENSITY = (1.0, 5.0)
FILLER = "I see. Go on."


class MessageGold(Gold):
    """What the person wrote at this point (and the label they gave it, where they did)."""

    message: str
    label: str | None = None


class NumberGold(Gold):
    """A number the person gave: their intensity after the conversation, or a grade."""

    intensity: float | None = None
    grade: float | None = None


class MessageAnswers(answerform.AnswerForm):
    """The next message, as plain text; a random one is an earlier message of the user's."""

    kind = "simulated_message"

    def example(self, hint: TaskHint) -> str:
        return FILLER

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        said = [text for speaker, text in hint.history if speaker == "user"]
        return answerform.pick(rng, said) if said else FILLER

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        return str(gold["message"]) if right else self.random(hint, rng)


class OneField(answerform.AnswerForm):
    """`{field: value}`, one field of the gold's: written from the gold where it holds one."""

    field: ClassVar[str]

    def answer(self, value: object) -> str:
        return answerform.dumps({self.field: value})

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        if not right or gold.get(self.field) is None:
            return self.random(hint, rng)
        return self.answer(gold[self.field])


class LabelAnswers(OneField):
    """`{"label": L}`, from a hint carrying the taxonomy's labels."""

    kind = "simulated_label"
    field = "label"
    marker = '{"label"'

    def example(self, hint: TaskHint) -> str:
        return self.answer(answerform.labels_of(hint)[0])

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        return self.answer(answerform.pick(rng, answerform.labels_of(hint)))

    def schema(self, hint: TaskHint) -> answerform.Schema | None:
        return answerform.obj({"label": answerform.one_of(hint.labels)}) if hint.labels else None


class OnScale(OneField):
    """`{field: n}`, a number on the scale the hint sets (`scale`): a random one is drawn
    uniformly on it (whole steps on a scale of whole numbers), the schema bounds it."""

    @abstractmethod
    def scale(self, hint: TaskHint) -> tuple[float, float]: ...

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        return self.answer(answerform.uniform(rng, *self.scale(hint)))

    def schema(self, hint: TaskHint) -> answerform.Schema:
        return answerform.obj({self.field: answerform.in_scale(*self.scale(hint))})


class IntensityAnswers(OnScale):
    """`{"intensity": n}`, from 1 (barely) to 5 (overwhelming)."""

    kind = "simulated_intensity"
    field = "intensity"
    marker = '{"intensity"'

    def example(self, hint: TaskHint) -> str:
        return self.answer(3)

    def scale(self, hint: TaskHint) -> tuple[float, float]:
        return INTENSITY


class GradeAnswers(OnScale):
    """`{"grade": n}` on the scale the hint's two labels give (low, high); the example is the
    low end, the first option a choice question lists."""

    kind = "simulated_grade"
    field = "grade"
    marker = '{"grade"'

    def example(self, hint: TaskHint) -> str:
        return self.answer(self.scale(hint)[0])

    def scale(self, hint: TaskHint) -> tuple[float, float]:
        return answerform.labelled_scale(hint)


MESSAGE_FORM = answerform.registered(MessageAnswers())
LABEL_FORM = answerform.registered(LabelAnswers())
AFTER_FORM = answerform.registered(IntensityAnswers())
GRADE_FORM = answerform.registered(GradeAnswers())
