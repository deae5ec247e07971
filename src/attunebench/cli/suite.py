"""`attunebench suite ...`: the shipped suites, and their data written out for inspection."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from attunebench.cli.consoles import CommandConsole, command_group
from attunebench.cli.errors import fail, folder_out, os_problem
from attunebench.data.importers import ImportFormatError, ImportOptionError
from attunebench.suite import Manifest, SuiteError, load_manifest, suite_digest, suite_names
from attunebench.suite.build import load_suite, write_suite_data

app = command_group("The shipped suites: fixed, versioned item sets.")
out = CommandConsole()
SUITE_ERRORS = (SuiteError, ImportFormatError, ImportOptionError, OSError)


def counts(manifest: Manifest) -> dict[tuple[str, str], tuple[int, int]]:
    """(part, task) -> (items, conversations with an item)."""
    part_of = {cid: part.name for part in manifest.parts for cid in part.conversations}
    items: Counter[tuple[str, str]] = Counter()
    conversations: dict[tuple[str, str], set[str]] = {}
    for task, keys in manifest.items.items():
        for key in keys:
            cid = key.split("|", 1)[0]
            items[part_of[cid], task] += 1
            conversations.setdefault((part_of[cid], task), set()).add(cid)
    return {key: (n, len(conversations[key])) for key, n in items.items()}


def _table(manifest: Manifest) -> Table:
    found = counts(manifest)
    table = Table(title=f"{manifest.name} version {manifest.version}: items (conversations)")
    table.add_column("part")
    table.add_column("licence")
    table.add_column("commercial use")
    for task in manifest.tasks:
        table.add_column(task, justify="right")
    for part in manifest.parts:
        licence = part.license.split(" (")[0]
        commercial = "no" if part.non_commercial else "yes"
        tasks = (found.get((part.name, t), (0, 0)) for t in manifest.tasks)
        table.add_row(part.name, licence, commercial, *(f"{n} ({c})" for n, c in tasks))
    totals = [str(len(keys)) for keys in manifest.items.values()]
    table.add_row("all", "", "", *totals, style="bold")
    return table


@app.command("list")
def list_suites() -> None:
    """Each shipped suite: version, digest, corpora and per-task item counts."""
    for name in suite_names():
        try:
            manifest = load_manifest(name)
        except SuiteError as error:
            fail(str(error))
        out.print(f"{name} version {manifest.version}  digest {suite_digest(name)[:12]}")
        out.print(f"  {manifest.description}", markup=False)
        out.print(_table(manifest), soft_wrap=True)


@app.command("data")
def data(
    name: Annotated[str, typer.Argument(help="The suite, e.g. open-v1.")],
    folder: Annotated[
        Path, typer.Option("--out", help="Folder for NAME.jsonl and NAME-train.jsonl.")
    ],
) -> None:
    """Build a suite's evaluated conversations and its train split (for the fitted baselines,
    `baseline/knn?train=FOLDER/NAME-train.jsonl`) from the corpora, checking every digest."""
    folder_out(folder)
    try:
        evaluated, train = write_suite_data(load_suite(name), folder)
    except SUITE_ERRORS as error:
        fail(os_problem(error) if isinstance(error, OSError) else str(error))
    out.print(f"wrote {evaluated} and {train}", markup=False, highlight=False)
