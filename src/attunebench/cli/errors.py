"""How a command says the user got something wrong: one plain line on stderr, then its exit code.

Checks that cost nothing run before any work (an `--out` that is a file where a folder is
wanted), so a mistake never costs a whole analysis first.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import typer

from attunebench.cli.consoles import CommandConsole

err = CommandConsole(stderr=True)
USAGE = 2  # what was asked cannot be done as asked


def fail(message: str, code: int = USAGE) -> NoReturn:
    """Print `error: MESSAGE` (plain text: messages hold paths and field names like turns[2])."""
    err.print("error:", style="bold red", end=" ")
    err.print(message, markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def clear_errors(*kinds: type[Exception]) -> Iterator[None]:
    """The block, ended by one line where it raises one of `kinds` (whose messages name the
    file, field or server at fault), a missing file, or another OS error."""
    try:
        yield
    except kinds as error:
        fail(str(error))
    except FileNotFoundError as error:
        fail(f"{error.filename}: no such file")
    except OSError as error:  # a folder it cannot write, a disk that is full
        fail(os_problem(error))


def os_problem(error: OSError) -> str:
    """An operating-system error as `PATH: what is wrong`, naming the path the user gave."""
    reason = (error.strerror or str(error)).lower()
    return reason if error.filename is None else f"{error.filename}: {reason}"


def _creatable(path: Path, option: str) -> None:
    """Refuse a path that could only be made inside an existing file, or whose folder (the
    nearest one that exists: where it would be made) cannot be written. Tried by making a
    nameless file there: `os.access` passes a read-only file system's folders to root, and a
    folder's permissions to root as well."""
    above = next((p for p in path.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        fail(f"{option} {path}: {above} is a file, not a folder")
    folder = next((p for p in (path, *path.parents) if p.is_dir()), None)
    if folder is None:
        return
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        reason = (error.strerror or str(error)).lower()
        fail(f"{option} {path}: {folder} cannot be written ({reason}); choose another {option}")


def folder_out(path: Path, option: str = "--out") -> None:
    """Refuse, before any work, an output folder that is an existing file (or inside one), or
    that cannot be written."""
    if path.exists() and not path.is_dir():
        fail(f"{option} {path} is a file; give a folder (it is created if missing)")
    _creatable(path, option)


def file_out(path: Path, option: str = "--out") -> None:
    """Refuse, before any work, an output file that is an existing folder (or inside a file),
    or whose folder cannot be written."""
    if path.is_dir():
        fail(f"{option} {path} is a folder; give a file name, such as {path / 'out.jsonl'}")
    _creatable(path, option)


def needs_extra(extra: str, what: str, code: int = USAGE) -> NoReturn:
    """A command whose libraries are not installed: say which extra brings them."""
    fail(
        f"{what} needs the `{extra}` extra: pip install 'attunebench[{extra}]' "
        f"(in a clone: .venv/bin/pip install -e '.[{extra}]')",
        code,
    )
