"""`attunebench export lm-eval DATASET --out DIR`: AttuneBench's choice tasks as a task folder
for lm-evaluation-harness, one `multiple_choice` document per choice question (docs/interop.md
says why lm-eval's `acc` is then AttuneBench's `score`). The YAMLs name the documents by
absolute path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attunebench.data.jsonl import atomic_writer
from attunebench.data.schema import Conversation
from attunebench.data.validate import load_validated
from attunebench.models.choice import CONTINUATION_PREFIX, completion_prompt
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Task as AttuneTask

PREFIX = "attunebench_"
UTILS = '''"""Fields of the documents `attunebench export lm-eval` writes (see each task's YAML)."""


def doc_to_text(doc):
    return doc["prompt"]


def doc_to_choice(doc):
    return doc["choices"]


def doc_to_target(doc):
    return doc["gold"]
'''


@dataclass(frozen=True)
class Document:
    id: str
    conversation: str
    prompt: str
    choices: list[str]
    gold: int


def documents(task: AttuneTask[Any, Any], conversations: list[Conversation]) -> Iterator[Document]:
    for item in task.items(conversations):
        for query in task.queries(item, "choice"):
            form = query.choice
            target = task.scoring.choice_gold(item, query)
            if form is None or target is None or target not in form.labels:
                continue
            yield Document(
                id=f"{item.key}|{query.key}",
                conversation=item.conversation.id,
                prompt=completion_prompt(form.messages),
                choices=list(form.keys),
                gold=form.labels.index(target),
            )


def task_yaml(name: str, documents_file: Path) -> str:
    return (
        f"task: {PREFIX}{name}\n"
        "dataset_path: json\n"
        "dataset_kwargs:\n"
        "  data_files:\n"
        f"    test: {json.dumps(str(documents_file.resolve()))}\n"
        "test_split: test\n"
        "output_type: multiple_choice\n"
        "doc_to_text: !function utils.doc_to_text\n"
        "doc_to_choice: !function utils.doc_to_choice\n"
        "doc_to_target: !function utils.doc_to_target\n"
        f"target_delimiter: {json.dumps(CONTINUATION_PREFIX)}\n"
        "metric_list:\n"
        "  - metric: acc\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n"
        "metadata:\n"
        "  version: 1.0\n"
    )


def export(data: Path, out: Path) -> dict[str, int]:
    """Write the task folder; returns the documents per task (tasks with none are left out)."""
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    conversations = load_validated(data)
    for name in load_tasks().names():
        task = load_tasks().get(name)()  # with its default options
        found = list(documents(task, conversations)) if "choice" in task.answer_modes else []
        if not found:
            continue
        target = out / f"{PREFIX}{name}.jsonl"
        with atomic_writer(target) as handle:
            for document in found:
                handle.write(json.dumps(document.__dict__, ensure_ascii=False) + "\n")
        with atomic_writer(out / f"{PREFIX}{name}.yaml") as handle:
            handle.write(task_yaml(name, target))
        written[name] = len(found)
    with atomic_writer(out / "utils.py") as handle:
        handle.write(UTILS)
    with atomic_writer(out / "attunebench.yaml") as handle:
        listed = "".join(f"  - {PREFIX}{name}\n" for name in written)
        handle.write(f"group: attunebench\ntask:\n{listed}metadata:\n  version: 1.0\n")
    return written
