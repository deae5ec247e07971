"""The replay as an ordinary run directory (`DIR/replay/`), read back as any run is.

The simulated person is a model in a role: each rollout is one model of the run, named
`person/MODEL?seed=S` (spec `person/SPEC`, its sampling in `params`), whose records are its
answers as the person, scored by the task against the person's own answer. The run holds the
replayed conversations (`conversations.jsonl`), so `attunebench report DIR/replay` reads it
as it reads any run: each task's headline per rollout with its interval, the task's crowd
reference and the spread over rollouts. The validation's own figures (`replay_scores`) are
read from the same directory (`analysis.loading.load_runs`), never from memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attunebench import __version__
from attunebench.analysis.loading import load_runs
from attunebench.data.jsonl import write_conversations
from attunebench.data.schema import Conversation
from attunebench.models.modelsfile import ModelEntry
from attunebench.models.registry import spec_kind
from attunebench.records import ItemRecord, ModelInfo, RunInfo
from attunebench.rundir import CONVERSATIONS_FILE, RECORDS_FILE, RUN_FILE, sha256_file, write_json
from attunebench.simulators.prompting import person_prompt
from attunebench.simulators.records import write_lines
from attunebench.simulators.replay import ItemKey, Replayed, item_key, replay_items, rollout_of
from attunebench.simulators.session import Sampling
from attunebench.tasks.base import Task, prompts_of

REPLAY_RUN = "replay"  # the run directory's name inside the validation folder
PERSON = "person"  # the role's prefix: `person/SPEC`


def person_name(simulator: ModelEntry, rollout: int) -> str:
    """What the run calls the simulated person in one rollout."""
    return f"{PERSON}/{simulator.name}?seed={rollout}"


def _person(simulator: ModelEntry, sampling: Sampling, rollout: int) -> ModelInfo:
    params = {"temperature": sampling.temperature, "top_p": sampling.top_p, "seed": rollout}
    return ModelInfo(
        spec=f"{PERSON}/{simulator.spec}",
        name=person_name(simulator, rollout),
        params=params,
        kind=spec_kind(simulator.spec),
        answer=simulator.answer,
        family=simulator.family,
    )


def write_replay_run(
    folder: Path,
    simulator: ModelEntry,
    sampling: Sampling,
    replayed: Sequence[Replayed],
    conversations: Sequence[Conversation],
    seed: int,
) -> Path:
    """The replay written as a complete run directory; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    write_conversations(folder / CONVERSATIONS_FILE, conversations)
    records = [
        r.model_copy(update={"model": person_name(simulator, rollout_of(r))})
        for found in replayed
        for r in found.records
    ]
    write_lines(folder / RECORDS_FILE, records)
    rollouts = sorted({rollout_of(r) for r in records})
    prompts = {
        (p.id, p.version): p for f in replayed for p in map(person_prompt, prompts_of(f.task))
    }
    provenance = {c.source.name: dict(c.source.provenance) for c in conversations}
    now = datetime.now(UTC).isoformat(timespec="seconds")
    info = RunInfo(
        package_version=__version__,
        dataset=str(folder / CONVERSATIONS_FILE),
        dataset_sha256=sha256_file(folder / CONVERSATIONS_FILE),
        dataset_ids=sorted(provenance),
        provenance=dict(sorted(provenance.items())),
        tasks=[found.task.name for found in replayed],
        task_options={found.task.name: found.task.options for found in replayed},
        models=[_person(simulator, sampling, rollout) for rollout in rollouts],
        prompts=[prompts[key] for key in sorted(prompts)],
        seed=seed,
        planned_items=len(records),
        started_at=now,
        finished_at=now,
        complete=True,
    )
    write_json(folder / RUN_FILE, info)
    return folder


def read_replay(
    folder: Path,
    tasks: Sequence[Task[Any, Any]],
    conversations: Sequence[Conversation],
    per_conversation: int | None,
) -> list[Replayed]:
    """Each task's replay as the run directory holds it: the items it chose (the tasks' own,
    on the same conversations) and every rollout's records."""
    runs = load_runs([folder])
    by_task: dict[str, list[ItemRecord]] = {}
    for record in runs.records:
        by_task.setdefault(record.task, []).append(record)
    found = []
    for task in tasks:
        records = by_task.get(task.name)
        if records:
            items = replay_items(task, conversations, per_conversation)
            at = {
                item_key(i.conversation.id, i.turn_index, i.item_id, i.variant): n
                for n, i in enumerate(items)
            }

            def order(record: ItemRecord, at: dict[ItemKey, int] = at) -> tuple[int, int]:
                # as they were asked: conversation by conversation, each item's rollouts in turn
                key = item_key(
                    record.conversation_id, record.turn_index, record.item_id, record.variant
                )
                return at[key], rollout_of(record)

            found.append(Replayed(task, tuple(items), tuple(sorted(records, key=order))))
    return found
