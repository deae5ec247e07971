"""The `hf/` provider against a tiny GPT-2 and tokenizer built here, so nothing is downloaded."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from attunebench.models.base import GenerateParams, Message, ProviderError
from attunebench.models.hf import HFProvider, render_prompt
from attunebench.models.registry import ProviderConfigError, make_provider

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

SENTENCES = [
    "user: I feel sad today",
    "assistant: I am sorry you feel sad , tell me more",
    "system: you are kind",
    "user: my exam went well and I am happy",
    "assistant: that is wonderful news",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def _tokenizer() -> Any:
    model = tokenizers.models.WordLevel(unk_token="[UNK]")
    raw = tokenizers.Tokenizer(model)
    raw.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    trainer = tokenizers.trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[EOS]"])
    raw.train_from_iterator(SENTENCES, trainer=trainer)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]"
    )


def _save(path: Path, *, template: str | None = None) -> Path:
    tokenizer = _tokenizer()
    if template is not None:
        tokenizer.chat_template = template
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=64,
        n_layer=2,
        n_head=2,
        n_embd=32,
        initializer_range=0.5,  # large weights, so greedy output depends on the prompt
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    transformers.GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _save(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture
def count_generate(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Records the batch size of every real `model.generate` call."""
    sizes: list[int] = []
    original = transformers.GPT2LMHeadModel.generate

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        sizes.append(int(kwargs["input_ids"].shape[0]))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(transformers.GPT2LMHeadModel, "generate", counting)
    return sizes


PROMPTS = [
    [Message("user", "I feel sad today")],
    [Message("system", "you are kind"), Message("user", "my exam went well and I am happy")],
    [Message("user", "tell me more")],
    [Message("user", "I am sorry")],
]
GREEDY = GenerateParams(max_tokens=6)


async def _all(provider: HFProvider, params: GenerateParams = GREEDY) -> list[str]:
    outputs = await asyncio.gather(*(provider.generate(p, params) for p in PROMPTS))
    return [o.text for o in outputs]


async def test_concurrent_requests_share_one_generate_call(
    checkpoint: Path, count_generate: list[int]
) -> None:
    provider = make_provider(f"hf/{checkpoint}", batch_size=8, max_wait_ms=50)
    assert isinstance(provider, HFProvider)
    outputs = await asyncio.gather(*(provider.generate(p, GREEDY) for p in PROMPTS))
    await provider.aclose()
    assert count_generate == [len(PROMPTS)]
    for output, prompt in zip(outputs, PROMPTS, strict=True):
        assert output.raw["batch_size"] == len(PROMPTS)
        words = render_prompt(provider_tokenizer(checkpoint), prompt).split()
        assert output.input_tokens == len(words)  # word-level vocabulary: one token per word
        assert 1 <= output.output_tokens <= GREEDY.max_tokens
        assert output.finish_reason in ("stop", "length")
        assert output.latency_s > 0


def provider_tokenizer(path: Path) -> Any:
    return transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)


async def test_batch_size_caps_each_generate_call(
    checkpoint: Path, count_generate: list[int]
) -> None:
    provider = make_provider(f"hf/{checkpoint}", batch_size=3, max_wait_ms=50)
    assert isinstance(provider, HFProvider)
    await _all(provider)
    await provider.aclose()
    assert sorted(count_generate) == [1, 3]


async def test_greedy_output_is_deterministic_and_unchanged_by_left_padding(
    checkpoint: Path, count_generate: list[int]
) -> None:
    batched = make_provider(f"hf/{checkpoint}", batch_size=8, max_wait_ms=50)
    first, second = await _all(batched), await _all(batched)  # type: ignore[arg-type]
    await batched.aclose()
    alone = make_provider(f"hf/{checkpoint}", batch_size=1)
    singles = await _all(alone)  # type: ignore[arg-type]
    await alone.aclose()
    assert first == second == singles
    assert len(set(first)) > 1, "outputs do not depend on the prompt, so padding is untested"
    assert count_generate[:2] == [4, 4] and count_generate[2:] == [1, 1, 1, 1]


async def test_different_sampling_parameters_never_share_a_batch(
    checkpoint: Path, count_generate: list[int]
) -> None:
    provider = make_provider(f"hf/{checkpoint}", batch_size=8, max_wait_ms=50)
    sampled = GenerateParams(max_tokens=6, temperature=1.0, seed=7)
    await asyncio.gather(
        *(provider.generate(p, GREEDY) for p in PROMPTS[:2]),
        *(provider.generate(p, sampled) for p in PROMPTS[2:]),
    )
    again = [
        o.text for o in await asyncio.gather(*(provider.generate(p, sampled) for p in PROMPTS[2:]))
    ]
    repeat = [
        o.text for o in await asyncio.gather(*(provider.generate(p, sampled) for p in PROMPTS[2:]))
    ]
    await provider.aclose()
    assert sorted(count_generate[:2]) == [2, 2]
    assert again == repeat  # a seeded sample is reproducible


async def test_stop_strings_cut_the_text(checkpoint: Path) -> None:
    provider = make_provider(f"hf/{checkpoint}")
    free = (await provider.generate(PROMPTS[0], GenerateParams(max_tokens=8))).text
    assert free, "the tiny model produced no text to cut"
    stop = free.split()[0]
    cut = await provider.generate(PROMPTS[0], GenerateParams(max_tokens=8, stop=(stop,)))
    await provider.aclose()
    assert cut.text == free[: free.find(stop)]
    assert cut.finish_reason == "stop"


def test_prompts_use_the_chat_template_when_the_tokenizer_has_one(tmp_path: Path) -> None:
    messages = [Message("system", "be kind"), Message("user", "hello")]
    plain = _tokenizer()
    assert render_prompt(plain, messages) == "system: be kind\nuser: hello\nassistant:"
    templated = _tokenizer()
    templated.chat_template = CHAT_TEMPLATE
    assert render_prompt(templated, messages) == "<system> be kind <user> hello <assistant>"


async def test_templated_checkpoint_generates(tmp_path: Path) -> None:
    provider = make_provider(f"hf/{_save(tmp_path, template=CHAT_TEMPLATE)}")
    output = await provider.generate(PROMPTS[1], GREEDY)
    await provider.aclose()
    rendered = "<system> you are kind <user> my exam went well and I am happy <assistant>"
    assert output.input_tokens == len(rendered.split(" "))


async def test_too_long_prompts_and_missing_checkpoints_fail_without_retry(
    checkpoint: Path, tmp_path: Path
) -> None:
    provider = make_provider(f"hf/{checkpoint}")
    with pytest.raises(ProviderError, match="exceeds the model's 64 positions") as long:
        await provider.generate(PROMPTS[0], GenerateParams(max_tokens=60))
    await provider.aclose()
    assert not long.value.retryable
    missing = make_provider(f"hf/{tmp_path / 'nowhere'}")
    assert isinstance(missing, HFProvider)
    with pytest.raises(ProviderConfigError, match="no checkpoint in that folder"):
        await missing.check()  # the engine's check before a run starts: one line, no URL
    with pytest.raises(ProviderError, match="no checkpoint in that folder") as absent:
        await missing.generate(PROMPTS[0], GREEDY)
    await missing.aclose()
    assert not absent.value.retryable and "http" not in str(absent.value)


def test_unknown_options_are_refused(checkpoint: Path) -> None:
    with pytest.raises(ProviderConfigError, match="batch_sise"):
        make_provider(f"hf/{checkpoint}", batch_sise=4)


async def test_closing_fails_requests_in_flight_instead_of_leaving_them_waiting(
    checkpoint: Path,
) -> None:
    provider = make_provider(f"hf/{checkpoint}", batch_size=8, max_wait_ms=200)
    waiting = asyncio.ensure_future(provider.generate(PROMPTS[0], GREEDY))
    await asyncio.sleep(0.05)  # taken from the queue, the batch still filling
    await provider.aclose()
    with pytest.raises(ProviderError, match="was closed"):
        await asyncio.wait_for(waiting, timeout=5)
