"""`hf/PATH`: a local transformers checkpoint, with concurrent requests batched together.

The checkpoint is read from PATH or the local Hugging Face cache, never downloaded. Prompts use
the tokenizer's chat template, else a `role: content` transcript. Concurrent calls with equal
parameters are gathered for up to `max_wait_ms` into one left-padded `model.generate` in a
worker thread. `json_mode` is not enforced; stop strings cut the decoded text. In choice mode
each key's exact log-likelihood as the prompt's continuation is computed in one forward pass."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from attunebench.answerform import TaskHint
from attunebench.frozen import Frozen
from attunebench.models import base
from attunebench.models.choice import CONTINUATION_PREFIX, completion_prompt, from_loglikelihoods
from attunebench.models.registry import PROVIDERS, ProviderConfigError, spec_options


class HFOptions(Frozen):
    batch_size: int = Field(default=8, ge=1)
    max_wait_ms: float = Field(default=5.0, ge=0, description="How long a batch waits to fill.")
    device: str | None = Field(default=None, description="Default: cuda when available, else cpu.")
    dtype: Literal["float32", "float16", "bfloat16"] | None = Field(
        default=None, description="Default: the checkpoint's own."
    )


@dataclass(frozen=True, slots=True)
class _Request:
    messages: list[base.Message]
    params: base.GenerateParams
    future: asyncio.Future[base.ModelOutput]


@dataclass(frozen=True, slots=True)
class _Loaded:
    tokenizer: Any
    model: Any
    templated: bool


def render_prompt(tokenizer: Any, messages: Sequence[base.Message]) -> str:
    """The prompt text: the chat template if the tokenizer has one, else `role: content` lines."""
    if getattr(tokenizer, "chat_template", None):
        rendered: str = tokenizer.apply_chat_template(
            [m.to_dict() for m in messages], tokenize=False, add_generation_prompt=True
        )
        return rendered
    return "".join(f"{m.role}: {m.content}\n" for m in messages) + "assistant:"


class HFProvider(base.NamedProvider):
    answer_modes = frozenset({"generate", "choice"})

    def __init__(self, path: str, options: HFOptions | None = None) -> None:
        super().__init__(f"hf/{path}")
        self.path = path
        self.options = options or HFOptions()
        self._loaded: _Loaded | None = None
        self._load_lock = threading.Lock()
        self._lock = threading.Lock()  # one forward pass at a time: torch uses every core
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Request] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Future[base.ModelOutput]] = set()

    async def generate(
        self,
        messages: list[base.Message],
        params: base.GenerateParams,
        hint: TaskHint | None = None,
    ) -> base.ModelOutput:
        started = time.perf_counter()
        future: asyncio.Future[base.ModelOutput] = asyncio.get_running_loop().create_future()
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        await self._ensure_worker().put(_Request(list(messages), params, future))
        return dataclasses.replace(await future, latency_s=time.perf_counter() - started)

    async def check(self) -> None:
        """Load the checkpoint now, so a bad path fails before a run starts rather than in it."""
        try:
            await asyncio.to_thread(self._load)
        except base.ProviderError as error:
            raise ProviderConfigError(str(error)) from None

    async def choice_scores(
        self, messages: list[base.Message], keys: list[str], params: base.GenerateParams
    ) -> base.ChoiceOutput:
        scores, tokens = await asyncio.to_thread(self._loglikelihoods, messages, keys)
        return base.ChoiceOutput(probabilities=from_loglikelihoods(scores), input_tokens=tokens)

    def _loglikelihoods(
        self, messages: list[base.Message], keys: list[str]
    ) -> tuple[dict[str, float], int]:
        """log P(key | prompt) for each key, in one padded batch; the prompt's tokens."""
        import torch

        loaded = self._load()
        tokenizer, model = loaded.tokenizer, loaded.model
        if loaded.templated:
            context, prefix = render_prompt(tokenizer, messages), ""
        else:
            context, prefix = completion_prompt(messages), CONTINUATION_PREFIX
        continuations = [prefix + key for key in keys]
        context_ids = tokenizer(context, add_special_tokens=not loaded.templated)["input_ids"]
        whole = [
            tokenizer(context + c, add_special_tokens=not loaded.templated)["input_ids"]
            for c in continuations
        ]
        # The continuation is what the whole adds to the context (tokenizers may merge at
        # the seam, so compare the sequences rather than tokenising the continuation alone).
        shared = [_common_prefix(context_ids, ids) for ids in whole]
        width = max(len(ids) for ids in whole)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        batch = torch.tensor([ids + [pad] * (width - len(ids)) for ids in whole])
        mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids in whole])
        with self._lock, torch.inference_mode():
            logits = model(input_ids=batch.to(model.device), attention_mask=mask.to(model.device))
            logprobs = torch.log_softmax(logits.logits.float(), dim=-1).cpu()
        scores = {}
        for row, (key, ids, start) in enumerate(zip(keys, whole, shared, strict=True)):
            start = max(start, 1)  # the first token has no context to be predicted from
            positions = range(start, len(ids))
            scores[key] = float(sum(logprobs[row, i - 1, ids[i]] for i in positions))
        return scores, len(tokenizer(context)["input_ids"])

    async def aclose(self) -> None:
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        for future in list(self._pending):  # queued or mid-batch: nobody is left waiting
            if not future.done():
                future.set_exception(base.ProviderError(f"{self.spec} was closed", retryable=False))
        self._worker = self._queue = None
        self._loaded = None

    def _ensure_worker(self) -> asyncio.Queue[_Request]:
        # One batching task per event loop: a provider reused under a new loop starts afresh.
        loop = asyncio.get_running_loop()
        if (
            self._queue is None
            or self._worker is None
            or self._worker.done()
            or self._loop is not loop
        ):
            self._loop, self._queue = loop, asyncio.Queue()
            self._worker = loop.create_task(self._serve(self._queue))
        return self._queue

    async def _serve(self, queue: asyncio.Queue[_Request]) -> None:
        size = self.options.batch_size
        while True:
            batch = [await queue.get()]
            if queue.qsize() < size - 1:
                await asyncio.sleep(self.options.max_wait_ms / 1000)
            while len(batch) < size and not queue.empty():
                batch.append(queue.get_nowait())
            # Grouped by the parameters' JSON: `extra` is a dict, so the model is unhashable.
            groups: dict[str, list[_Request]] = {}
            for request in batch:
                groups.setdefault(request.params.model_dump_json(), []).append(request)
            for group in groups.values():
                await self._run(group[0].params, [r for r in group if not r.future.done()])

    async def _run(self, params: base.GenerateParams, requests: list[_Request]) -> None:
        if not requests:
            return
        try:
            results = await asyncio.to_thread(
                self._generate_batch, [r.messages for r in requests], params
            )
        except Exception as exc:  # every request of the batch shares its fate
            error = (
                exc
                if isinstance(exc, base.ProviderError)
                else base.ProviderError(f"{self.spec}: generation failed: {exc}", retryable=False)
            )
            results = [error] * len(requests)
        for request, result in zip(requests, results, strict=True):
            if request.future.done():
                continue
            if isinstance(result, BaseException):
                request.future.set_exception(result)
            else:
                request.future.set_result(result)

    def _load(self) -> _Loaded:
        with self._load_lock:
            if self._loaded is None:
                self._loaded = _load_checkpoint(self.path, self.options)
            return self._loaded

    def _generate_batch(
        self, conversations: list[list[base.Message]], params: base.GenerateParams
    ) -> list[base.ModelOutput | BaseException]:
        import torch

        loaded = self._load()
        tokenizer, model = loaded.tokenizer, loaded.model
        prompts = [render_prompt(tokenizer, messages) for messages in conversations]
        # A chat template writes its own special tokens; adding them again would double BOS.
        encoded = tokenizer(
            prompts, return_tensors="pt", padding=True, add_special_tokens=not loaded.templated
        ).to(model.device)
        prompt_length = int(encoded["input_ids"].shape[1])
        limit = getattr(model.config, "max_position_embeddings", None)
        if limit is not None and prompt_length + params.max_tokens > limit:
            raise base.ProviderError(
                f"{self.spec}: prompt of {prompt_length} tokens plus max_tokens "
                f"{params.max_tokens} exceeds the model's {limit} positions",
                retryable=False,
            )
        sampling = params.temperature > 0
        if sampling and params.seed is not None:
            torch.manual_seed(params.seed)  # generate() draws from torch's global generator
        with torch.inference_mode():
            output = model.generate(
                **encoded,
                max_new_tokens=params.max_tokens,
                do_sample=sampling,
                temperature=params.temperature if sampling else None,
                top_p=(params.top_p or 1.0) if sampling else None,
                top_k=None,
                pad_token_id=tokenizer.pad_token_id,
            )
        new_tokens = output[:, prompt_length:].tolist()
        input_counts = encoded["attention_mask"].sum(dim=1).tolist()
        eos = _eos_ids(model, tokenizer)
        return [
            _decode(tokenizer, row, int(count), params, len(prompts), eos)
            for row, count in zip(new_tokens, input_counts, strict=True)
        ]


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    pairs = enumerate(zip(a, b, strict=False))
    return next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    configured = model.generation_config.eos_token_id
    ids = set(configured if isinstance(configured, list) else [configured])
    ids.add(tokenizer.eos_token_id)
    return {i for i in ids if i is not None}


def _decode(
    tokenizer: Any,
    row: list[int],
    input_tokens: int,
    params: base.GenerateParams,
    batch: int,
    eos: set[int],
) -> base.ModelOutput:
    end = next((i for i, token in enumerate(row) if token in eos), None)
    finish = "length" if end is None else "stop"
    kept = row if end is None else row[: end + 1]
    text: str = tokenizer.decode(kept, skip_special_tokens=True)
    cuts = [i for i in (text.find(stop) for stop in params.stop) if i >= 0]
    if cuts:
        text, finish = text[: min(cuts)], "stop"
    return base.ModelOutput(
        text, input_tokens, len(kept), finish_reason=finish, raw={"batch_size": batch}
    )


def _load_checkpoint(path: str, options: HFOptions) -> _Loaded:
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - the `ml` extra is missing
        raise base.ProviderError("hf/ models need the `ml` extra", retryable=False) from exc
    device = options.device or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model: Any = AutoModelForCausalLM.from_pretrained(
            path,
            local_files_only=True,
            dtype=getattr(torch, options.dtype) if options.dtype else "auto",
        )
    except OSError as exc:  # transformers' own text is many lines, with a URL to go online
        raise base.ProviderError(
            f"hf/{path}: no checkpoint in that folder or in the local Hugging Face cache "
            "(nothing is downloaded at run time): give the folder holding the model",
            retryable=False,
        ) from exc
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise base.ProviderError(
            f"hf/{path}: cannot load a local checkpoint: {first}", retryable=False
        ) from exc
    tokenizer.padding_side = "left"  # decoder-only models continue from the right edge
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(device).eval()
    return _Loaded(tokenizer, model, bool(getattr(tokenizer, "chat_template", None)))


@PROVIDERS.register("hf")
def make_hf(model: str, **options: Any) -> HFProvider:
    return HFProvider(model, spec_options(HFOptions, f"hf/{model}", options))
