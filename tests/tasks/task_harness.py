"""Helpers for the task tests: the real engine over scripted providers, and conversation builders.

`Harness` binds scripted providers into a real `Engine` (no cache, no sleeping between
retries) and records every query it is asked, with the output it got, so a test can check
the prompts a task renders as well as the records `engine.evaluate` makes of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from attunebench import __version__
from attunebench.analysis.loading import Run, Runs
from attunebench.answerform import TaskHint
from attunebench.data.jsonl import read_conversations
from attunebench.data.sample import sample_path
from attunebench.data.schema import (
    Context,
    Conversation,
    Need,
    Preference,
    Response,
    Source,
    State,
    Turn,
)
from attunebench.engine.caller import BoundModel, Engine, ItemCaller
from attunebench.engine.evaluate import evaluate
from attunebench.engine.ledger import LedgerBook
from attunebench.engine.limits import Endpoint
from attunebench.engine.retry import RetryPolicy
from attunebench.models.base import ChoiceOutput, GenerateParams, Message, Provider, ProviderError
from attunebench.models.mock import MockProvider, default_answer
from attunebench.models.modelsfile import ModelEntry
from attunebench.records import ItemRecord, ModelInfo, RunInfo
from attunebench.tasks import load_tasks
from attunebench.tasks.base import AnswerMode, CallRole, Item, Output, Query, Task, View

Responder = Callable[[list[Message], TaskHint | None], str]
# (messages, option keys, hint) -> each key's probability
Spread = Callable[[Sequence[Message], Sequence[str], TaskHint | None], Mapping[str, float]]


def make_task(name: str, **options: Any) -> Task[Any, Any]:
    return load_tasks().get(name)(**options)


class Chooser(Provider):
    """A scripted provider that answers choice questions with the probabilities `spread` gives
    (and generate questions as the mock does)."""

    answer_modes = frozenset({"generate", "choice"})

    def __init__(self, name: str, spread: Spread) -> None:
        self._spec = f"mock/{name}"
        self._spread = spread

    @property
    def spec(self) -> str:
        return self._spec

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> Any:
        return await MockProvider("inner").generate(messages, params, hint)

    async def choose(
        self,
        messages: Sequence[Message],
        keys: Sequence[str],
        params: GenerateParams,
        hint: TaskHint | None = None,
    ) -> ChoiceOutput:
        spread = dict(self._spread(messages, keys, hint))
        if set(spread) - set(keys):
            raise ProviderError(f"probabilities for keys not offered: {spread}", retryable=False)
        return ChoiceOutput(probabilities=spread)


@dataclass
class Call:
    model: str
    query: Query
    item: Item[Any]
    role: CallRole
    output: Output

    @property
    def messages(self) -> list[Message]:
        """What the model was sent: the choice form's messages when it chose."""
        return self.query.messages if self.output.probabilities is None else self.choice_messages

    @property
    def choice_messages(self) -> list[Message]:
        assert self.query.choice is not None
        return list(self.query.choice.messages)


async def _no_sleep(seconds: float) -> None:
    return None


@dataclass
class Harness:
    """A real `Engine` over the given providers, recording every call it makes."""

    providers: dict[str, Provider]
    choice: frozenset[str] = frozenset()  # models answering in choice mode
    calls: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        bound = {
            name: BoundModel(
                ModelEntry(
                    name=name,
                    spec=provider.spec,
                    answer="choice" if name in self.choice else "generate",
                ),
                provider,
                Endpoint(name, 8),
            )
            for name, provider in self.providers.items()
        }
        policy = RetryPolicy(max_attempts=2, base_delay_s=0.0)
        self.engine = Engine(bound, cache=None, ledger=LedgerBook(), policy=policy, sleep=_no_sleep)

    @classmethod
    def scripted(cls, **responders: Responder | Sequence[str] | Mapping[str, str]) -> Harness:
        """One mock provider per model name, answering as `responder` says."""
        providers: dict[str, Provider] = {
            name: MockProvider(name.replace("/", "-"), outputs=fn)
            for name, fn in responders.items()
        }
        return cls(providers)

    @classmethod
    def choosing(cls, **spreads: Spread) -> Harness:
        providers: dict[str, Provider] = {name: Chooser(name, s) for name, s in spreads.items()}
        return cls(providers, choice=frozenset(spreads))

    def caller(self) -> Recorder:
        return Recorder(self, ItemCaller(self.engine))

    async def evaluate(
        self,
        task: Task[Any, Any],
        item: Item[Any],
        model: str,
        judges: Sequence[str] = (),
        mode: AnswerMode = "generate",
    ) -> ItemRecord:
        return await evaluate(task, item, model, self.caller(), judges, mode)  # type: ignore[arg-type]

    async def evaluate_all(
        self,
        task: Task[Any, Any],
        items: Iterable[Item[Any]],
        model: str,
        judges: Sequence[str] = (),
        mode: AnswerMode = "generate",
    ) -> list[ItemRecord]:
        return [await self.evaluate(task, item, model, judges, mode) for item in items]

    def of(self, model: str) -> list[Call]:
        return [c for c in self.calls if c.model == model]


@dataclass
class Recorder:
    """An ItemCaller that also records each call in its harness."""

    harness: Harness
    inner: ItemCaller

    async def ask(self, model: str, query: Query, item: Item[Any], role: CallRole) -> Output:
        output = await self.inner.ask(model, query, item, role)
        self.harness.calls.append(Call(model, query, item, role, output))
        return output


def views(task: Task[Any, Any], records: Sequence[ItemRecord]) -> list[View[Any, Any]]:
    return [task.scoring.view(record) for record in records]


def rendered(messages: Sequence[Message]) -> str:
    """Every message of a prompt in order, as a person reads it."""
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)


def all_prompts(query: Query) -> list[str]:
    """A query's generate prompt and, where it has one, its choice form's."""
    prompts = [rendered(query.messages)]
    if query.choice is not None:
        prompts.append(rendered(query.choice.messages))
    return prompts


def judged_runs(
    records: Sequence[ItemRecord], models: Sequence[str], conversations: Iterable[Conversation]
) -> Runs:
    """One judged `response` run over `records` held in memory (judge "j"), as loading its
    directory would give it, for the analysis to summarise."""
    info = RunInfo(
        package_version=__version__,
        dataset="dataset.jsonl",
        dataset_sha256="0" * 64,
        tasks=["response"],
        models=[ModelInfo(spec=m) for m in models],
        judges=[ModelInfo(spec="j", role="judge")],
        seed=0,
        planned_items=len(records),
        started_at="2026-01-01T00:00:00Z",
        complete=True,
    )
    found = {c.id: c for c in conversations}
    return Runs((Run(Path("run"), info, None, len(records)),), tuple(records), found)


def item_prompts(
    name: str, task: Task[Any, Any], conversations: Iterable[Conversation], count: int
) -> dict[str, list[str]]:
    """The prompts of a task's first `count` items, in every answer mode, keyed by task, item,
    variant, mode and query (the keys of the golden prompt files)."""
    found = {}
    for number, item in enumerate(islice(task.items(conversations), count)):
        for mode in task.answer_modes:
            for query in task.queries(item, mode):
                found[f"{name}/{number}/{item.variant}/{mode}/{query.key}"] = all_prompts(query)
    return found


def assert_renders_as_golden(golden: Path, now: Mapping[str, list[str]]) -> None:
    """Every prompt of a golden file renders now word for word as it did, and no other."""
    recorded = json.loads(golden.read_text(encoding="utf-8"))
    assert sorted(now) == sorted(recorded)
    for key, prompts in recorded.items():
        assert now[key] == prompts, key


def write_golden(golden: Path, now: Mapping[str, list[str]]) -> None:
    """Rewrite a golden prompt file (after a deliberate change of wording)."""
    golden.write_text(json.dumps(now, indent=1, ensure_ascii=False) + "\n")


def mock_answer(messages: list[Message], hint: TaskHint | None) -> str:
    return default_answer(hint)


def sample_conversations() -> list[Conversation]:
    return read_conversations(sample_path())


def conversation(
    turns: list[Turn],
    *,
    cid: str = "c1",
    provenance: Mapping[str, str] | None = None,
    outcome: Any = None,
    rating_scale: Any = None,
    **context: Any,
) -> Conversation:
    return Conversation(
        id=cid,
        source=Source(
            kind="simulated",
            name="task-tests",
            provenance=dict(provenance or {}),
            rating_scale=rating_scale,
        ),
        taxonomy="attunebench-default",
        context=Context(**context),
        turns=tuple(turns),
        outcome=outcome,
    )


def two_reply_turn(
    index: int,
    user: str,
    *,
    chosen: str | None = "a",
    tie: bool = False,
    state: State | None = None,
    texts: tuple[str, str] = ("Reply one.", "Reply two, a longer one."),
    ratings: tuple[float | None, float | None] = (None, None),
    behaviors: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
    need: str | None = None,
    comment: str | None = None,
    continued: str | None = "a",
    feedback: float | None = None,
) -> Turn:
    responses = tuple(
        Response(id=rid, text=text, rating=rating, behaviors=labels)
        for rid, text, rating, labels in zip("ab", texts, ratings, behaviors, strict=True)
    )
    preference = None
    if chosen is not None or tie:
        preference = Preference(chosen=None if tie else chosen, tie=tie, comment=comment)
    return Turn(
        index=index,
        user=user,
        state=state,
        responses=responses,
        need=Need(text=need) if need else None,
        preference=preference,
        continued=continued,
        feedback=feedback,
    )


def rated_turn(index: int, rating: float | None, *, user: str | None = None) -> Turn:
    """A turn with one rated reply, the one the conversation went on with."""
    reply = Response(id="a", text=f"The reply to message {index}.", rating=rating)
    return Turn(
        index=index, user=user or f"Message number {index}.", responses=(reply,), continued="a"
    )


class HashEncoder:
    """A stand-in sentence encoder: a fixed unit vector per text, drawn from its hash."""

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            vector = np.random.default_rng(seed).normal(size=16)
            rows.append(vector / np.linalg.norm(vector))
        return np.asarray(rows, dtype=np.float32)
