"""`make demo-llm`'s models file and judged run, checked without serving the models."""

from __future__ import annotations

from pathlib import Path

from attunebench.models.local_models import GEMMA, QWEN
from attunebench.models.modelsfile import load_models_file, models_file_text
from attunebench.tasks import load_tasks
from testkit.demo_llm import OPTIONS, judged_tasks, model_entry


def test_gemma_answers_by_choice_and_qwen_by_schema_constrained_generation(tmp_path: Path) -> None:
    written = [model_entry(model, threads=1, free=False) for model in (GEMMA, QWEN)]
    models_file = tmp_path / "models.toml"
    models_file.write_text(models_file_text(written), encoding="utf-8")  # as the demo writes it
    entries = load_models_file(models_file)
    assert list(entries.values()) == written
    gemma, qwen = entries[GEMMA.alias], entries[QWEN.alias]
    assert (gemma.spec, gemma.answer, gemma.json_schema) == (f"local/{GEMMA.name}", "choice", False)
    assert (qwen.spec, qwen.answer, qwen.json_schema) == (f"local/{QWEN.name}", "generate", True)
    assert gemma.options == qwen.options == {"threads": 1}


def test_free_asks_qwen_without_the_answer_schemas() -> None:
    assert not model_entry(QWEN, threads=1, free=True).json_schema


def test_the_judged_run_has_every_judged_task_and_options_only_for_them() -> None:
    tasks = load_tasks()
    judged = judged_tasks()
    assert judged and all(tasks.get(name)().needs_judge for name in judged)
    assert set(OPTIONS) <= set(judged)
