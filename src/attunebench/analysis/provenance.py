"""Who and what produced the numbers: models and judges with their kinds, runs, data, gold.

A simulator's rollouts (`rollout_seeds`) are never under test one by one: `comparisons.rollouts`
reads them together. Who gave each task's gold comes from the sources' provenance of the fields
the task reads (`Task.gold_fields`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from attunebench import __version__
from attunebench.analysis.loading import Runs
from attunebench.analysis.schema import ModelEntry, Provenance, RunEntry
from attunebench.kinds import ModelKind, kind_of
from attunebench.records import ModelInfo

# Sources and provenances that make a report illustrative or simulated rather than evidence.
NOT_EVIDENCE_KINDS = {"sample": "illustrative sample", "simulated": "simulated"}
NOT_EVIDENCE_PROVENANCE = {"illustrative": "illustrative", "simulated": "simulated"}
# A run's entry in the summary: these fields as run.json records them, the rest said here.
AS_RECORDED = set(RunEntry.model_fields) - {"path", "prompts", "recorded_items"}


def rollout_seeds(runs: Runs) -> dict[str, dict[str, int]]:
    """Per simulator run once per seed (the name without `?seed=S`), its rollouts: name -> seed
    (at least two)."""
    found: dict[str, dict[str, int]] = {}
    for run in runs.runs:
        for model in run.info.models:
            name = model.name or model.spec
            base, _, query = name.rpartition("?")
            seed = model.params.get("seed")
            if isinstance(seed, int) and query == f"seed={seed}":
                found.setdefault(base, {})[name] = seed
    return {base: seeds for base, seeds in found.items() if len(seeds) >= 2}


@dataclass(frozen=True)
class Roster:
    """Every model and judge of the runs, by the name records use."""

    entries: Mapping[str, ModelInfo]
    include_simulated: bool = False
    rollouts: frozenset[str] = frozenset()  # models that are rollouts of one simulator

    @classmethod
    def of(cls, runs: Runs, include_simulated: bool = False) -> Roster:
        entries = {
            info.name or info.spec: info
            for run in runs.runs
            for info in (*run.info.models, *run.info.judges)
        }
        found = rollout_seeds(runs).values()
        return cls(entries, include_simulated, frozenset(name for s in found for name in s))

    def spec(self, name: str) -> str:
        info = self.entries.get(name)
        return info.spec if info is not None else name

    def kind(self, name: str) -> ModelKind:
        info = self.entries.get(name)
        return kind_of(self.spec(name), info.kind if info is not None else "model")

    def is_subject(self, name: str) -> bool:
        """A model under test: a language model, or a simulated one when asked for; not one
        rollout of a simulator (its rollouts together are one model, not several)."""
        kind = self.kind(name)
        if name in self.rollouts:
            return False
        return kind == "model" or (kind == "simulated" and self.include_simulated)

    def entry(self, name: str, role: Literal["subject", "judge"]) -> ModelEntry:
        info = self.entries.get(name) or ModelInfo(spec=name)
        return ModelEntry(
            **info.model_dump(include={"answer", "params", "base_url"}),
            name=name,
            spec=self.spec(name),
            kind=self.kind(name),
            role=role,
        )


def sources(runs: Runs) -> dict[str, dict[str, str]]:
    """Per source name, who gave each labelled field (as the runs declared it)."""
    found: dict[str, dict[str, str]] = {}
    for run in runs.runs:
        found.update(run.info.provenance)
    for conversation in runs.conversations.values():
        found.setdefault(conversation.source.name, dict(conversation.source.provenance))
    return dict(sorted(found.items()))


def task_provenance(
    runs: Runs, task_sources: Iterable[str], gold_fields: Sequence[str]
) -> list[str]:
    """Who gave a task's gold on the sources its items came from (first field declared)."""
    declared = sources(runs)
    given = set()
    for source in task_sources:
        fields = declared.get(source, {})
        found = next((fields[f] for f in gold_fields if f in fields), None)
        given.add(found or "undeclared")
    return sorted(given)


def banner(runs: Runs, roster: Roster, names: Iterable[str]) -> list[str]:
    """Lines a reader must see first: sample, illustrative or simulated data or models."""
    lines = []
    kinds = {c.source.kind for c in runs.conversations.values()}
    for kind, words in NOT_EVIDENCE_KINDS.items():
        if kind in kinds:
            lines.append(f"{words} data: these numbers say nothing about real people")
    given = {value for fields in sources(runs).values() for value in fields.values()}
    for value, words in NOT_EVIDENCE_PROVENANCE.items():
        if value in given and not any(words in line for line in lines):
            lines.append(f"{words} labels: these numbers say nothing about real people")
    for kind in ("simulated", "mock"):
        shown = sorted(n for n in names if roster.kind(n) == kind)
        if shown:
            lines.append(f"{kind} models ({', '.join(shown)}): test instruments, not models")
    return lines


def provenance(
    runs: Runs,
    roster: Roster,
    subjects: Iterable[str],
    judges: Iterable[str],
    recorded: Mapping[str, int],
) -> Provenance:
    names = sorted(set(subjects))
    planned = sum(run.info.planned_items for run in runs.runs)
    done = sum(recorded.values())
    complete = all(run.info.complete for run in runs.runs)
    status = "complete" if complete else f"run incomplete: {done:,} of {planned:,} planned items"
    return Provenance(
        package_version=__version__,
        dataset_sha256=runs.dataset_hashes,
        runs=[
            RunEntry(
                **run.info.model_dump(include=AS_RECORDED),
                path=str(run.path),
                prompts=[f"{p.id} {p.version}" for p in run.info.prompts],
                recorded_items=recorded.get(str(run.path), 0),
            )
            for run in runs.runs
        ],
        models=[roster.entry(name, "subject") for name in names],
        judges=[roster.entry(name, "judge") for name in sorted(judges)],
        sources=sources(runs),
        banner=banner(runs, roster, [*names, *judges]),
        status=status,
    )
