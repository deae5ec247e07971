"""Read run directories (run.json, records.jsonl, ledger.json) and merge them.

Several directories merge when they ran on the same data: different models evaluated at
different times. Runs on different data (different dataset hashes) are refused unless the
caller allows it, and then a warning says so. Where one item was recorded twice, the later
record wins: within a file that is a resumed run's newer answer; across runs, a warning counts
the replacements.

The conversations (item texts, participant traits, source fields, topics) come from the run
directory's conversations.jsonl; a record written before the gold named its corpus part takes
it from there (`with_parts`). A run directory written before that file existed (records
v1) falls back to the dataset named in run.json, when it can be found with a matching hash.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from pathlib import Path
from typing import Any

from attunebench import rundir
from attunebench.analysis.frame import Frame
from attunebench.analysis.schema import Notice
from attunebench.data.jsonl import iter_conversations, sha256_file
from attunebench.data.schema import Conversation
from attunebench.records import RECORD_KEY, ItemRecord, Ledger, RunInfo

RecordKey = tuple[str, str, str, int, str, str]


class RunLoadError(ValueError):
    """A run directory is missing a file or holds a malformed line (file, line, field named)."""


@dataclass(frozen=True)
class Run:
    path: Path
    info: RunInfo
    ledger: Ledger | None
    recorded: int = 0  # items with an answer (ok or invalid), each counted once


@dataclass(frozen=True)
class Runs:
    """Merged runs: their provenance, the deduplicated records and the dataset, if found."""

    runs: tuple[Run, ...]
    records: tuple[ItemRecord, ...]
    conversations: Mapping[str, Conversation] = field(default_factory=dict)
    notices: tuple[Notice, ...] = ()

    @cached_property
    def frame(self) -> Frame:
        """The records as columns: made by `load_runs` as it reads them, so that every
        analysis of the runs (a summary, a power study) starts from numbers."""
        return Frame.from_records(self.records)

    @property
    def dataset_hashes(self) -> list[str]:
        return sorted({run.info.dataset_sha256 for run in self.runs})

    def made_with(self, task: str) -> dict[str, Any]:
        """The options (and seed) the first run of `task` made it with, as run.json records."""
        for run in self.runs:
            if task in run.info.tasks:
                return {**run.info.task_options.get(task, {}), "seed": run.info.seed}
        return {}


@contextlib.contextmanager
def paused_gc(freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector for a bulk load or analysis.

    Records hold no reference cycles, and with hundreds of thousands of them alive every
    collection walks them all: at benchmark scale that costs more than the parsing itself.
    With `freeze`, what was allocated is then moved out of the collector's sight for good
    (`gc.freeze`): loaded records live as long as the analysis, and refcounting still frees
    them, so the collector need never walk them.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()


def read_run(directory: str | Path) -> tuple[Run, list[ItemRecord]]:
    """One run directory (a torn last line is dropped; v1 records are upgraded)."""
    root = Path(directory)
    for needed in (rundir.RUN_FILE, rundir.RECORDS_FILE):
        if not (root / needed).is_file():
            raise RunLoadError(f"{root}: not a run directory ({needed} is missing)")
    try:
        info = rundir.read_run_info(root)
        ledger = rundir.read_ledger(root)
        records = rundir.read_records(root / rundir.RECORDS_FILE)
    except rundir.RunDirError as error:
        raise RunLoadError(str(error)) from None
    assert info is not None  # checked above
    latest = dict(zip(map(RECORD_KEY, records), map(attrgetter("status"), records), strict=True))
    answered = len(latest) - list(latest.values()).count("failed")
    return Run(root, info, ledger, answered), records


def _find_dataset(runs: Sequence[Run], override: Path | None) -> tuple[Path | None, list[Notice]]:
    if override is not None:
        if not override.is_file():
            raise RunLoadError(f"{override}: dataset file not found")
        return override, []
    expected = runs[0].info.dataset_sha256
    for run in runs:
        named = Path(run.info.dataset)
        for candidate in [named] if named.is_absolute() else [named, run.path / named]:
            if candidate.is_file() and sha256_file(candidate) == expected:
                return candidate, []
    note = Notice(
        kind="dataset_unavailable",
        message=(
            f"dataset {runs[0].info.dataset!r} (sha256 {expected[:12]}) was not found with a "
            "matching hash: item texts, participant traits and source fields are not shown "
            "(pass --data to point at it)"
        ),
    )
    return None, [note]


def _merge(
    batches: Sequence[tuple[Run, list[ItemRecord]]],
) -> tuple[list[ItemRecord], list[Notice]]:
    merged: dict[RecordKey, ItemRecord] = {}
    notices: list[Notice] = []
    for run, records in batches:
        keys = list(map(RECORD_KEY, records))
        replaced = len(merged.keys() & set(keys))  # items an earlier run recorded
        merged.update(zip(keys, records, strict=True))  # the later record of a key wins
        if replaced:
            notices.append(
                Notice(
                    kind="duplicate_records",
                    message=f"{replaced} records in {run.path} replace items of earlier runs",
                )
            )
    # In key order, not the order calls happened to finish: the summary of the same records is
    # then the same to the last digit (float sums depend on the order they are added in).
    return list(map(merged.__getitem__, sorted(merged))), notices


def skipped_notices(runs: Sequence[Run], records: Sequence[ItemRecord]) -> list[Notice]:
    """The (task, model) pairs a run left out as not applicable, unless another run merged in
    has records for them: such a pair has no score because it has no meaning, not by failure."""
    recorded = set(map(attrgetter("task", "model"), records))
    seen: dict[tuple[str, str], str] = {}
    for run in runs:
        for pair in run.info.skipped:
            if (pair.task, pair.model) not in recorded:
                seen.setdefault((pair.task, pair.model), pair.reason)
    return [
        Notice(kind="skipped", task=task, model=model, message=f"not applicable: {reason}")
        for (task, model), reason in seen.items()
    ]


def provider_notices(runs: Sequence[Run]) -> list[Notice]:
    """Per model: whether its answers were schema-constrained, the request parameters the
    pre-flight adapted (dropped or renamed), and the answers cut off at their token budget
    (scored invalid), from run.json and the ledger."""
    notices: list[Notice] = []
    constrained = {
        m.name or m.spec for r in runs for m in (*r.info.models, *r.info.judges) if m.json_schema
    }
    for model in sorted(constrained):
        message = (
            "answers were schema-constrained (json_schema = true): the server could write only "
            "answers of each task's JSON form, so its valid share is not a free model's"
        )
        notices.append(Notice(kind="constrained", model=model, message=message))
    for run in runs:
        for model, changes in sorted(run.info.adapted.items()):
            said = "; ".join(f"{name} {action}" for name, action in sorted(changes.items()))
            message = f"the pre-flight adapted its requests (the server refused them): {said}"
            notices.append(Notice(kind="adapted", model=model, message=message))
        cut: dict[str, int] = {}
        for entry in run.ledger.entries if run.ledger is not None else ():
            cut[entry.model] = cut.get(entry.model, 0) + entry.truncated
        for model, count in sorted(cut.items()):
            if count:
                message = (
                    f"{count} answers cut off at the token budget (finish reason length or "
                    "max_tokens), scored invalid: raise params.max_tokens"
                )
                notices.append(Notice(kind="truncated", model=model, message=message))
    return notices


def _suite_label(run: Run) -> str:
    suite = run.info.suite
    if suite is None:
        return f"{run.path} (no suite)"
    return f"{run.path} ({suite.name} version {suite.version}, digest {suite.digest[:12]})"


def suite_refusal(runs: Sequence[Run]) -> str | None:
    """Why these runs cannot be ranked together, in one line: made on different suites (name,
    version or manifest digest), or some on a suite and some not. None when they agree."""
    suites = {run.info.suite.identity if run.info.suite else None for run in runs}
    if len(suites) <= 1:
        return None
    listing = "; ".join(_suite_label(run) for run in runs)
    return (
        "runs made on different suite versions or digests score different items and are not "
        f"ranked together: {listing}"
    )


def load_runs(
    directories: Sequence[str | Path],
    *,
    dataset: str | Path | None = None,
    allow_mixed_datasets: bool = False,
) -> Runs:
    """Read and merge run directories; refuse runs on different data unless allowed."""
    if not directories:
        raise RunLoadError("no run directory given")
    with paused_gc(freeze=True):
        runs = _load(directories, dataset, allow_mixed_datasets)
        runs.frame  # noqa: B018 - the columns, made once with the records they read
        return runs


def _load(
    directories: Sequence[str | Path], dataset: str | Path | None, allow_mixed_datasets: bool
) -> Runs:
    batches = [read_run(directory) for directory in directories]
    runs = tuple(run for run, _ in batches)
    refusal = suite_refusal(runs)
    if refusal is not None:
        raise RunLoadError(refusal)
    notices: list[Notice] = []
    hashes = sorted({run.info.dataset_sha256 for run in runs})
    if len(hashes) > 1:
        listing = ", ".join(f"{run.path} ({run.info.dataset_sha256[:12]})" for run in runs)
        if not allow_mixed_datasets:
            raise RunLoadError(f"runs are on different datasets: {listing}")
        notices.append(
            Notice(kind="mixed_datasets", message=f"runs on different datasets merged: {listing}")
        )
    records, merge_notices = _merge(batches)
    notices.extend(merge_notices)
    notices.extend(skipped_notices(runs, records))
    notices.extend(provider_notices(runs))
    conversations: dict[str, Conversation] = {}
    stored = [run.path / rundir.CONVERSATIONS_FILE for run in runs]
    if dataset is None and all(path.is_file() for path in stored):
        for path in stored:
            conversations.update((c.id, c) for c in iter_conversations(path))
    else:
        found_path, found = _find_dataset(runs, Path(dataset) if dataset is not None else None)
        notices.extend(found)
        if found_path is not None:
            conversations = {c.id: c for c in iter_conversations(found_path)}
    return Runs(runs, with_parts(records, conversations), conversations, tuple(notices))


def with_parts(
    records: Sequence[ItemRecord], conversations: Mapping[str, Conversation]
) -> tuple[ItemRecord, ...]:
    """The records, each gold naming its corpus part (`Gold.part`): a record written before
    the gold kept it takes its conversation's source name, so that its headline is computed
    within part as a new run's is (a conversation not found leaves it as it is)."""
    out = list(records)
    golds = list(map(attrgetter("gold"), out))
    lacking = [i for i, gold in enumerate(golds) if gold is not None and gold.get("part") is None]
    for i in lacking:
        found = conversations.get(out[i].conversation_id)
        if found is not None:
            update = {"gold": {**golds[i], "part": found.source.name}}
            out[i] = out[i].model_copy(update=update)
    return tuple(out)
