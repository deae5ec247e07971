"""Validate attunebench/v1 JSON Lines files, streaming, and report every problem by file and line.

No line is read past `max_line_bytes` (an over-long line is reported, not parsed), so memory is
bounded by the limit, never by the file. `load_validated` is the gate for `--data`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from attunebench.data.checks import check_record
from attunebench.data.schema import Conversation
from attunebench.data.schema_errors import Finding

DEFAULT_MAX_LINE_BYTES = 1 << 20
DEFAULT_KEEP = 1000
_SKIP_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a dataset file; parts not known (e.g. for malformed JSON) are None."""

    file: str
    line: int | None
    message: str
    conversation_id: str | None = None
    turn: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = []
        if self.conversation_id is not None:
            parts.append(f"conversation {self.conversation_id}")
        if self.turn is not None:
            parts.append(f"turn {self.turn}")
        if self.field is not None:
            parts.append(self.field)
        located = ", ".join(parts)
        return f"{where}: {located}: {self.message}" if located else f"{where}: {self.message}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass(frozen=True, slots=True)
class FileReport:
    """What validating one file found: counts of the valid content, and the problems."""

    file: str
    lines: int
    conversations: int
    turns: int
    responses: int
    problems: tuple[Problem, ...]
    problem_count: int

    @property
    def ok(self) -> bool:
        return self.problem_count == 0

    def summary(self) -> str:
        sizes = (
            ("conversation", self.conversations),
            ("turn", self.turns),
            ("response", self.responses),
        )
        counts = ", ".join(_count(n, noun) for noun, n in sizes)
        if self.ok:
            return f"{self.file}: valid attunebench/v1 ({counts})"
        return f"{self.file}: {_count(self.problem_count, 'problem')} ({counts} valid)"


class DatasetError(ValueError):
    """A dataset file failed validation; `problems` holds the first of them, `count` all."""

    def __init__(self, report: FileReport, shown: int = 10) -> None:
        self.report = report
        self.problems = report.problems
        self.count = report.problem_count
        lines = [str(p) for p in report.problems[:shown]]
        if self.count == 1 and report.problems[0].line is None:  # about the whole file: one line
            super().__init__(lines[0])
            return
        if self.count > len(lines):
            lines.append(f"... and {self.count - len(lines)} more problems")
        super().__init__(f"{report.summary()}\n" + "\n".join(lines))


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    offset: int  # byte offset of the line's start in the file
    raw: bytes | None  # None when the line was over the limit and skipped
    length: int
    final_newline: bool


def _lines(handle: BinaryIO, max_line_bytes: int) -> Iterator[_Line]:
    number, offset = 0, 0
    while raw := handle.readline(max_line_bytes + 1):
        number += 1
        length, newline = len(raw), raw.endswith(b"\n")
        if not newline and length > max_line_bytes:
            while not newline and (rest := handle.readline(_SKIP_CHUNK)):
                length += len(rest)
                newline = rest.endswith(b"\n")
            yield _Line(number, offset, None, length, newline)
        else:
            yield _Line(number, offset, raw, length, newline)
        offset += length


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _decode(line: _Line, max_line_bytes: int) -> tuple[object | None, str | None]:
    """The line's JSON value, or why it has none."""
    if line.raw is None:
        return None, f"line is {line.length} bytes, over the limit of {max_line_bytes}; not parsed"
    try:
        text = line.raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = line.raw[exc.start]
        return (
            None,
            f"not valid UTF-8: byte 0x{bad:02x} at byte offset {line.offset + exc.start}",
        )
    if line.number == 1 and text.startswith("\ufeff"):
        return None, "file starts with a byte-order mark; save it as UTF-8 without BOM"
    try:
        return json.loads(text, parse_constant=_no_constants), None
    except json.JSONDecodeError as exc:
        reason = f"malformed JSON: {exc.msg.removesuffix(' at')} at column {exc.colno}"
    except ValueError as exc:
        reason = f"malformed JSON: {exc}"
    except RecursionError:
        reason = "malformed JSON: nested too deeply"
    if not line.final_newline:
        return None, f"truncated last line (no final newline; {reason})"
    return None, reason


# The counts of valid content a FileReport gives, kept by the tally under their field names.
SIZES = ("lines", "conversations", "turns", "responses")


@dataclass(slots=True)
class _Tally:
    file: str
    keep: int
    problems: list[Problem] = field(default_factory=list)
    problem_count: int = 0
    counts: Counter[str] = field(default_factory=Counter)  # the SIZES, and the records read
    first_line: dict[str, int] = field(default_factory=dict)

    def add(self, problem: Problem) -> None:
        self.problem_count += 1
        if len(self.problems) < self.keep:
            self.problems.append(problem)

    def report(self) -> FileReport:
        sizes = {size: self.counts[size] for size in SIZES}
        return FileReport(
            self.file, **sizes, problems=tuple(self.problems), problem_count=self.problem_count
        )


def _check_line(tally: _Tally, line: _Line, obj: object) -> Conversation | None:
    raw_id = obj.get("id") if isinstance(obj, dict) else None
    conversation_id = raw_id if isinstance(raw_id, str) and raw_id else None
    try:
        conversation, findings = check_record(obj)
    except RecursionError:
        conversation, findings = None, [Finding("record is nested too deeply to check")]
    if conversation_id is not None:
        first = tally.first_line.setdefault(conversation_id, line.number)
        if first != line.number:
            findings.append(
                Finding(f"duplicate conversation id; first seen on line {first}", None, "id")
            )
            conversation = None
    for f in findings:
        tally.add(Problem(tally.file, line.number, f.message, conversation_id, f.turn, f.field))
    return conversation


def _tabular(path: str | Path, handle: BinaryIO) -> str | None:
    """Why a CSV, TSV, compressed or binary file given for a dataset is refused as a whole, with
    what to do; None for anything else (a JSON Lines record starts with `{`, no header row does)."""
    start = handle.readline(4096).lstrip(b"\xef\xbb\xbf").lstrip()
    handle.seek(0)
    if start.startswith((b"\x1f\x8b", b"PK\x03\x04")):
        return "a compressed file (gzip or zip), not JSON Lines text: decompress it first"
    if b"\x00" in handle.read(4096):  # no text file holds a NUL: an image, a binary, UTF-16
        handle.seek(0)
        return "a binary file (an image, a program, or text saved as UTF-16), not JSON Lines text"
    handle.seek(0)
    suffix = Path(path).suffix.lower()
    if start.startswith(b"{") or not (
        suffix in (".csv", ".tsv") or b"," in start or b"\t" in start
    ):
        return None
    kind = "TSV" if suffix == ".tsv" or b"\t" in start else "CSV"
    return (
        f"a {kind} file, not attunebench/v1 JSON Lines: import it first with "
        f"`attunebench data import csv {path} --out {Path(path).with_suffix('.jsonl')} "
        "--conversation-col ... --speaker-col ... --text-col ...` (docs/data.md)"
    )


def validate_file(
    path: str | Path,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    keep: int = DEFAULT_KEEP,
    on_valid: Callable[[Conversation], None] | None = None,
    name: str | None = None,
) -> FileReport:
    """Validate one JSON Lines file; `on_valid` receives each valid conversation as it is read,
    and problems name the file `name` (a converted copy's origin) or else `path`."""
    tally = _Tally(name or str(path), keep)
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below; OSError must become a problem)
    except OSError as exc:
        tally.add(Problem(tally.file, None, f"cannot read file: {exc.strerror or exc}"))
        return tally.report()
    with handle:
        tabular = _tabular(path, handle)
        if tabular is not None:
            tally.add(Problem(tally.file, None, tabular))
            return tally.report()
        for line in _lines(handle, max_line_bytes):
            tally.counts["lines"] += 1
            if line.raw is not None and not line.raw.strip():
                continue  # blank lines are allowed, as in the reader
            tally.counts["records"] += 1
            obj, reason = _decode(line, max_line_bytes)
            if reason is not None:
                tally.add(Problem(tally.file, line.number, reason))
                continue
            conversation = _check_line(tally, line, obj)
            if conversation is not None:
                tally.counts.update(
                    conversations=1,
                    turns=len(conversation.turns),
                    responses=sum(len(t.responses) for t in conversation.turns),
                )
                if on_valid is not None:
                    on_valid(conversation)
    if tally.counts["records"] == 0:
        tally.add(Problem(tally.file, None, "file holds no conversations"))
    return tally.report()


def load_validated(
    path: str | Path, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> list[Conversation]:
    """Every conversation in `path`, or `DatasetError` if anything in the file is invalid."""
    conversations: list[Conversation] = []
    report = validate_file(path, max_line_bytes=max_line_bytes, on_valid=conversations.append)
    if not report.ok:
        raise DatasetError(report)
    return conversations
