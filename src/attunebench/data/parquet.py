"""Parquet and Hugging Face `datasets` forms of a dataset, both lossless against the JSON Lines.

Each row is one conversation: its canonical JSON line in the `record` column, beside a few flat
columns to filter on. Not nested Arrow columns: the format has unions Parquet cannot store
(`taxonomy` is an id or an object) and open maps whose struct form would change with the data.
Every way in goes through `validate_file`, with problems reported by row.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from attunebench.data.jsonl import atomic_writer, conversation_line
from attunebench.data.schema import Conversation
from attunebench.data.validate import DatasetError, FileReport, Problem, validate_file

RECORD_COLUMN = "record"
SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("source_kind", pa.string(), nullable=False),
        pa.field("source_name", pa.string(), nullable=False),
        pa.field("taxonomy", pa.string(), nullable=False),
        pa.field("participant_id", pa.string()),
        pa.field("turns", pa.int32(), nullable=False),
        pa.field("responses", pa.int32(), nullable=False),
        pa.field(RECORD_COLUMN, pa.large_string(), nullable=False),
    ],
    metadata={"format": "attunebench/v1"},
)
BATCH_ROWS = 1000


def _row(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.id,
        "source_kind": conversation.source.kind,
        "source_name": conversation.source.name,
        "taxonomy": conversation.taxonomy_id,
        "participant_id": conversation.participant.id if conversation.participant else None,
        "turns": len(conversation.turns),
        "responses": sum(len(t.responses) for t in conversation.turns),
        RECORD_COLUMN: conversation_line(conversation),
    }


def jsonl_to_parquet(src: str | Path, dst: str | Path) -> int:
    """Validate `src` while streaming it into Parquet; no output if invalid (`DatasetError`)."""
    batch: list[dict[str, Any]] = []
    with atomic_writer(dst, "wb") as handle, pq.ParquetWriter(handle, SCHEMA) as writer:

        def add(conversation: Conversation) -> None:
            batch.append(_row(conversation))
            if len(batch) >= BATCH_ROWS:
                writer.write_batch(pa.RecordBatch.from_pylist(batch, schema=SCHEMA))
                batch.clear()

        report = validate_file(src, on_valid=add)
        if not report.ok:
            raise DatasetError(report)
        if batch or report.conversations == 0:
            writer.write_batch(pa.RecordBatch.from_pylist(batch, schema=SCHEMA))
    return report.conversations


def _failure(path: str | Path, message: str) -> DatasetError:
    file = str(path)
    return DatasetError(FileReport(file, 0, 0, 0, 0, (Problem(file, None, message),), 1))


def _parquet_records(path: str | Path) -> Iterator[str | None]:
    try:
        source = pq.ParquetFile(path)
        if RECORD_COLUMN not in source.schema_arrow.names:
            raise _failure(path, f"no {RECORD_COLUMN!r} column: not an attunebench/v1 Parquet file")
        for batch in source.iter_batches(batch_size=BATCH_ROWS, columns=[RECORD_COLUMN]):
            yield from batch.column(0).to_pylist()
    except (OSError, UnicodeDecodeError, pa.ArrowException) as exc:  # some only when read
        raise _failure(path, f"cannot read as Parquet: {exc}") from exc


def _validate_records(
    records: Iterable[str | None], name: str, on_valid: Callable[[Conversation], None]
) -> FileReport:
    """Spool records to a scratch JSON Lines file and validate it as `name` (rows as lines)."""
    with tempfile.TemporaryDirectory(prefix="attunebench-") as scratch:
        spool = Path(scratch) / "records.jsonl"
        with open(spool, "w", encoding="utf-8", newline="\n") as handle:
            for record in records:
                # A raw newline can only be whitespace between JSON tokens; keep one row per line.
                text = "null" if record is None else record.replace("\r", " ").replace("\n", " ")
                handle.write(text + "\n")
        return validate_file(spool, name=name, on_valid=on_valid)


def _records_to_jsonl(records: Iterable[str | None], name: str, dst: str | Path) -> int:
    with atomic_writer(dst) as out:

        def write(conversation: Conversation) -> None:
            out.write(conversation_line(conversation) + "\n")

        report = _validate_records(records, name, write)
        if not report.ok:
            raise DatasetError(report)
    return report.conversations


def parquet_to_jsonl(src: str | Path, dst: str | Path) -> int:
    """Check every row of an attunebench Parquet file and write it as JSON Lines."""
    return _records_to_jsonl(_parquet_records(src), str(src), dst)


@contextlib.contextmanager
def _quiet(datasets: Any) -> Iterator[None]:
    """Silence `datasets` progress bars for the call, restoring the caller's setting."""
    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def export_hf(src: str | Path, dst: str | Path) -> int:
    """Validate a JSON Lines file and save it with `datasets.Dataset.save_to_disk` at `dst`."""
    import datasets  # lazily: the `hub` extra

    target = Path(dst)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise FileExistsError(f"{target} already exists; choose a new folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{target.name}.", dir=target.parent) as scratch:
        work = Path(scratch)
        count = jsonl_to_parquet(src, work / "records.parquet")
        with _quiet(datasets):
            dataset = datasets.Dataset.from_parquet(
                str(work / "records.parquet"), cache_dir=str(work / "cache")
            )
            dataset.save_to_disk(str(work / "dataset"))
        os.replace(work / "dataset", target)  # same folder, so the rename is atomic
    return count


def _hf_records(path: str | Path) -> Iterator[str | None]:
    import datasets

    try:
        dataset = datasets.load_from_disk(str(path))
    except (OSError, ValueError) as exc:
        raise _failure(path, f"cannot load as a `datasets` folder: {exc}") from exc
    if not isinstance(dataset, datasets.Dataset) or RECORD_COLUMN not in dataset.column_names:
        raise _failure(path, f"not an attunebench/v1 export (one Dataset with {RECORD_COLUMN!r})")
    for batch in dataset.with_format("arrow").iter(batch_size=BATCH_ROWS):
        yield from batch[RECORD_COLUMN].to_pylist()


def hf_to_jsonl(src: str | Path, dst: str | Path) -> int:
    """Check every row of a `datasets` export and write it as JSON Lines."""
    return _records_to_jsonl(_hf_records(src), str(src), dst)
