"""`person/SPEC`: the model asked as the person, in the frame, everything else its own."""

from __future__ import annotations

from collections.abc import Sequence

from attunebench.answerform import TaskHint
from attunebench.engine.person import PERSONA, Person
from attunebench.models import GenerateParams, Message, make_provider, spec_kind
from attunebench.models.base import ChoiceOutput, ModelOutput, NamedProvider

PARAMS = GenerateParams()
FRAME = PERSONA.render()[0].content


class Heard(NamedProvider):
    """Keeps what it was sent; answers in both modes."""

    answer_modes = frozenset({"generate", "choice"})
    reads_gold = True

    def __init__(self) -> None:
        super().__init__("mock/heard")
        self.sent: list[list[Message]] = []
        self.closed = 0

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        self.sent.append(list(messages))
        return ModelOutput(text="{}")

    async def choice_scores(
        self, messages: list[Message], keys: list[str], params: GenerateParams
    ) -> ChoiceOutput:
        self.sent.append(list(messages))
        return ChoiceOutput(probabilities=dict.fromkeys(keys, 1 / len(keys)))

    def cache_identity(self) -> dict[str, str]:
        return {"weights": "w"}

    async def aclose(self) -> None:
        self.closed += 1


def contents(messages: Sequence[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


async def test_the_question_is_asked_in_the_frame_in_both_modes() -> None:
    heard = Heard()
    person = Person(heard)
    task = [Message("system", "Name the user's emotion."), Message("user", "User: fine")]
    await person.generate(task, PARAMS)
    await person.choose(task, ["a", "b"], PARAMS)
    framed = [("system", f"{FRAME}\n\nName the user's emotion."), ("user", "User: fine")]
    assert [contents(sent) for sent in heard.sent] == [framed, framed]
    await person.generate([Message("user", "hello")], PARAMS)  # no system message: the frame is one
    assert contents(heard.sent[-1]) == [("system", FRAME), ("user", "hello")]


def test_the_role_is_the_models_own_but_for_its_spec_and_cache_key() -> None:
    heard = Heard()
    person = Person(heard)
    assert person.spec == "person/mock/heard"
    assert person.reads_gold and person.answer_modes == heard.answer_modes
    assert person.endpoint == heard.endpoint  # the rollouts share the model's server
    assert person.cache_identity() == {"weights": "w", "person": PERSONA.info.version}


async def test_it_closes_the_model_only_where_it_made_it() -> None:
    heard = Heard()
    await Person(heard, owns=False).aclose()
    assert heard.closed == 0
    await Person(heard).aclose()
    assert heard.closed == 1


def test_a_person_spec_makes_the_model_in_the_role_and_keeps_its_kind() -> None:
    made = make_provider("person/sim/person-oracle?noise=0.5")
    assert isinstance(made, Person) and made.reads_gold
    assert made.model.spec == "sim/person-oracle"
    assert spec_kind("person/sim/person-oracle") == "simulated"
    assert spec_kind("person/openai/gpt") == "model"
    assert spec_kind("person/some-model") == "model"
