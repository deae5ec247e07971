"""`mock/<name>`: a scripted provider for testing the harness, never a model under evaluation.

Unscripted, it answers every hint with its form's example, so `mock/default` runs every task
with no keys. Scripts set the outputs (a cycled list, a function, or a dict by item key), the
latency and the failures (in call order or per item attempt). It counts calls and calls in
flight, and can log each call's item key to a file, so a test can count calls across a killed
process."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path

from attunebench.answerform import TaskHint
from attunebench.models.base import (
    GenerateParams,
    Message,
    ModelOutput,
    NamedProvider,
    ProviderError,
)
from attunebench.models.registry import PROVIDERS

Responder = Callable[[list[Message], TaskHint | None], str]
Outputs = Sequence[str] | Responder | Mapping[str, str]
Failure = ProviderError | None
Failures = Sequence[Failure] | Mapping[str, Sequence[Failure]]
Sleep = Callable[[float], Awaitable[None]]

DEFAULT_REPLY = "That sounds really hard. I'm here with you; do you want to tell me more?"
# Each ASCII character as a word's (w) or a gap's (space), where str.split() would split it.
_GAPS = bytes(ord(" ") if chr(c).isspace() else ord("w") for c in range(256))


def word_count(text: str) -> int:
    """len(text.split()), the mock's token count, without making the list of words: a
    hostile test's 5 MB outputs took 0.1 s each to split, and most of the test's time."""
    if not text.isascii():
        return len(text.split())
    marked = text.encode("ascii").translate(_GAPS)
    return marked.count(b" w") + marked.startswith(b"w")


def default_answer(hint: TaskHint | None) -> str:
    """A valid answer to the hint: its form's example (the first label, candidate A, a
    middling number), or a fixed reply where the hint asks for plain text."""
    if hint is None or hint.form is None:
        return DEFAULT_REPLY
    return hint.form.example(hint)


@PROVIDERS.register("mock")
class MockProvider(NamedProvider):
    """Scripted outputs, latency and failures; see the module docstring."""

    def __init__(
        self,
        name: str = "default",
        *,
        outputs: Outputs | None = None,
        latency_s: float | Sequence[float] = 0.0,
        failures: Failures = (),
        call_log: str | Path | None = None,
        sleep: Sleep = asyncio.sleep,
        token_delay_s: float = 0.0,
    ) -> None:
        super().__init__(f"mock/{name}")
        self._token_delay_s = token_delay_s
        self._outputs = outputs
        self._cycle: Iterator[str] | None = None
        if isinstance(outputs, Sequence) and not isinstance(outputs, str):
            self._cycle = itertools.cycle(list(outputs)) if outputs else None
        latencies = [latency_s] if isinstance(latency_s, int | float) else list(latency_s)
        self._latencies = itertools.cycle(latencies or [0.0])
        self._failures = failures
        self._call_log = Path(call_log) if call_log is not None else None
        self._sleep = sleep
        self.calls = 0
        self.calls_by_key: Counter[str] = Counter()
        self.in_flight = 0
        self.peak_in_flight = 0

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        key = hint.item_key if hint is not None else ""
        attempt = self.calls_by_key[key]
        call_index = self.calls
        self.calls += 1
        self.calls_by_key[key] += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            latency = next(self._latencies)
            if latency > 0:
                await self._sleep(latency)
            failure = self._failure(key, attempt, call_index)
            if failure is not None:
                raise failure
            text = self._text(messages, hint)
            # One line per successful call, flushed at once: a killed process's calls count.
            if self._call_log is not None:
                with self._call_log.open("a", encoding="utf-8") as handle:
                    handle.write(key + "\n")
        finally:
            self.in_flight -= 1
        return ModelOutput(
            text=text,
            input_tokens=sum(word_count(m.content) for m in messages),
            output_tokens=word_count(text),
            latency_s=latency,
            finish_reason="stop",
            raw={"mock": self._spec},
        )

    async def stream(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> AsyncIterator[str]:
        """`generate`'s answer (after its latency), a word at a time, `token_delay_s` apart."""
        output = await self.generate(messages, params, hint)
        for n, piece in enumerate(re.findall(r"\s*\S+", output.text) or [output.text]):
            if n and self._token_delay_s > 0:
                await self._sleep(self._token_delay_s)
            yield piece

    def _failure(self, key: str, attempt: int, call_index: int) -> Failure:
        if isinstance(self._failures, Mapping):
            script = self._failures.get(key, ())
            return script[attempt] if attempt < len(script) else None
        return self._failures[call_index] if call_index < len(self._failures) else None

    def _text(self, messages: list[Message], hint: TaskHint | None) -> str:
        outputs = self._outputs
        if self._cycle is not None:
            return next(self._cycle)
        if callable(outputs):
            return outputs(messages, hint)
        if isinstance(outputs, Mapping) and hint is not None and hint.item_key in outputs:
            return outputs[hint.item_key]
        return default_answer(hint)
