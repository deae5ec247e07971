"""AttuneBench, inspect_ai and lm-evaluation-harness report the same accuracy on the same
items and the same answers.

- inspect: its `mockllm` answers from a script (a function of the prompt); AttuneBench's
  `mock/` answers from the same script; the emotion task's mean per-item score (primary-label
  accuracy, unusable answers scoring 0) must be equal.
- lm-eval: a tiny random-weight GPT-2 built here (nothing downloaded); lm-eval scores each
  option's log-likelihood on the folder `attunebench export lm-eval` writes, and AttuneBench's
  `hf/` provider does the same in choice mode; emotion `acc` must equal AttuneBench's
  primary-label accuracy (its `score`; the headline is macro-F1).

Skipped with the reason when the `inspect` or `lm-eval` extra is absent; `make test` installs
both.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.data.taxonomy import load_taxonomy

LABELS = [label.name for label in load_taxonomy("attunebench-default").emotions]


def scripted(prompt: str) -> str:
    """An answer fixed by the prompt: a label chosen by its hash, sometimes not JSON at all."""
    digest = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    if digest % 5 == 0:
        return "I am not sure how they felt."
    return json.dumps({"primary": LABELS[digest % len(LABELS)], "emotions": []})


def headline(summary: Path, task: str) -> float:
    """The model's mean per-item score (emotion: primary-label accuracy, what the other
    harnesses report; AttuneBench's headline is macro-F1 beside it)."""
    data = json.loads(summary.read_text())
    rows = [
        r
        for r in data["scores"]
        if r["task"] == task and r["metric"] == "score" and r["model_kind"] != "reference"
    ]
    assert len(rows) == 1, rows
    value: float = rows[0]["value"]
    return value


def attunebench_headline(tmp_path: Path, data: Path, models: Path, model: str) -> float:
    runner = CliRunner()
    result = runner.invoke(app, [
        "run", "--data", str(data), "--models-file", str(models), "--model", model,
        "--task", "emotion", "--out", str(tmp_path / "run"), "--no-cache", "--no-progress",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "rep"),
                                 "--format", "json", "--resamples", "100"])  # fmt: skip
    assert result.exit_code == 0, result.output
    return headline(tmp_path / "rep" / "summary.json", "emotion")


def test_inspect_and_attunebench_agree_on_scripted_answers(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="the `inspect` extra is not installed")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    from attunebench import inspect as attune_inspect
    from attunebench.models.mock import MockProvider

    def answer(messages: list[Any], *_: Any) -> ModelOutput:
        return ModelOutput.from_content("mockllm", scripted(messages[-1].text))

    model = get_model("mockllm/model", custom_outputs=answer)
    emotion = attune_inspect.INSPECT_TASKS["emotion"]()
    logs = inspect_eval(emotion, model=model, log_dir=str(tmp_path / "logs"), display="none")
    scores = logs[0].results.scores[0].metrics  # type: ignore[union-attr]
    inspect_mean = scores["mean"].value

    # The same script behind AttuneBench's mock provider, through the engine and the report.
    import asyncio

    from attunebench.engine import RunConfig, run
    from attunebench.models.modelsfile import ModelEntry

    mock = MockProvider("scripted", outputs=lambda messages, hint: scripted(messages[-1].content))
    config = RunConfig(data=sample_path(), out=tmp_path / "run", tasks=("emotion",),
                       models=(ModelEntry.from_spec("mock/scripted"),), cache_path=None,
                       progress=False)  # fmt: skip
    asyncio.run(run(config, providers={"mock/scripted": mock}))
    from attunebench.analysis import Options, build_summary, load_runs

    summary = build_summary(load_runs([config.out]), Options(resamples=100))
    ours = next(
        r.value
        for r in summary.scores
        if r.task == "emotion" and r.metric == "score" and r.model_kind != "reference"
    )
    assert ours is not None and 0 < ours < 1  # the script gets some right and some wrong
    assert inspect_mean == pytest.approx(ours, abs=1e-12)


# lm-eval ------------------------------------------------------------------------------------


def tiny_model(folder: Path, texts: list[str]) -> Path:
    """A 2-layer GPT-2 with random weights and a byte-level BPE trained on `texts`."""
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=400, min_frequency=1, special_tokens=["<|end|>"])
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token="<|end|>", pad_token="<|end|>"
    )
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=len(tokenizer), n_positions=2048, n_layer=2,
                                     n_head=2, n_embd=32, initializer_range=0.5,
                                     eos_token_id=tokenizer.eos_token_id)  # fmt: skip
    transformers.GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_lm_eval_and_attunebench_agree_on_option_likelihoods(tmp_path: Path) -> None:
    pytest.importorskip("lm_eval", reason="the `lm-eval` extra is not installed")
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    data = tmp_path / "data.jsonl"
    write_conversations(data, read_conversations(sample_path())[:4])
    folder = tmp_path / "lm-eval"
    result = CliRunner().invoke(app, ["export", "lm-eval", str(data), "--out", str(folder)])
    assert result.exit_code == 0, result.output
    documents = [json.loads(line) for line in (folder / "attunebench_emotion.jsonl").open()]
    checkpoint = tiny_model(
        tmp_path / "tiny", [d["prompt"] + "ABCDEFGHIJKLMNOP" for d in documents]
    )

    # Only the exported folder's tasks: indexing lm-eval's own ~15,000 takes seconds.
    tasks = TaskManager(include_path=str(folder), include_defaults=False)
    found = simple_evaluate(
        model="hf", model_args=f"pretrained={checkpoint},dtype=float32",
        tasks=["attunebench_emotion"], task_manager=tasks, device="cpu", batch_size=4,
    )  # fmt: skip
    lm_eval_acc = found["results"]["attunebench_emotion"]["acc,none"]

    models = tmp_path / "models.toml"
    models.write_text(f'[models.tiny]\nspec = "hf/{checkpoint}"\nanswer = "choice"\n')
    ours = attunebench_headline(tmp_path, data, models, "tiny")
    assert lm_eval_acc == pytest.approx(ours, abs=1e-12)
