"""Preparation before the first call: each model is prepared once, for the kinds the plan still
asks it, the progress bar says what it does, and a finished run prepares nothing."""

from __future__ import annotations

import io
from pathlib import Path

from engine_harness import RunFn
from rich.console import Console

from attunebench.answerform import TaskHint
from attunebench.engine.caller import BoundModel
from attunebench.engine.ledger import LedgerBook
from attunebench.engine.limits import Endpoint
from attunebench.engine.prepare import prepare_models
from attunebench.engine.progress import RunProgress
from attunebench.models import GenerateParams, Message, MockProvider, ModelOutput
from attunebench.models.base import Preparation
from attunebench.models.modelsfile import ModelEntry


class Preparing(MockProvider):
    """A mock that must be prepared before it answers, and keeps what it was told."""

    def __init__(self, name: str = "default") -> None:
        super().__init__(name)
        self.preparations: list[Preparation] = []

    async def prepare(self, preparation: Preparation) -> None:
        preparation.report("warming up")
        self.preparations.append(preparation)

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        assert self.preparations, "called before it was prepared"
        return await super().generate(messages, params, hint)


async def test_each_model_is_prepared_once_for_what_it_is_asked(
    run_echo: RunFn, tmp_path: Path
) -> None:
    subject, judge = Preparing(), Preparing("judge")
    result = await run_echo({"m": subject}, judges={"j": judge})
    assert result.complete and subject.calls == judge.calls == 12
    [asked] = subject.preparations
    assert asked.kinds == {"response"} and asked.cache_dir == tmp_path  # beside the cache
    [judging] = judge.preparations
    assert judging.kinds == {"judge_rubric"}

    again, judge_again = Preparing(), Preparing("judge")
    rerun = await run_echo({"m": again}, judges={"j": judge_again})
    assert rerun.complete and again.preparations == judge_again.preparations == []


async def test_without_a_cache_there_is_no_folder_to_keep_things_in(run_echo: RunFn) -> None:
    subject = Preparing()
    await run_echo({"m": subject}, cache_path=None)
    assert subject.preparations[0].cache_dir is None


async def test_the_bar_says_what_a_preparation_does(tmp_path: Path) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    bar = RunProgress(10, 0, LedgerBook(None), enabled=True, console=console)
    said: list[str] = []
    original = bar.describe

    def describe(text: str) -> None:
        said.append(text)
        original(text)

    bar.describe = describe  # type: ignore[method-assign]
    provider = Preparing("slow")
    bound = BoundModel(ModelEntry(name="s", spec="mock/slow"), provider, Endpoint("e", 1))
    with bar:
        await prepare_models({"s": bound}, {"s": frozenset({"emotion"})}, tmp_path, bar)
    assert said == ["preparing mock/slow: warming up", ""]
    bar.note("a line of its own")
    assert "a line of its own" in screen.getvalue()
