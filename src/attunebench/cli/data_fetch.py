"""`attunebench data fetch`: download corpora from the sources table, verified, with progress."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from attunebench.cli.consoles import CommandConsole
from attunebench.cli.errors import fail, folder_out
from attunebench.data.fetch import (
    FetchItem,
    FetchResult,
    fetch_all,
    in_place,
    license_refusals,
    plan,
)
from attunebench.data.locations import user_data_dir
from attunebench.data.sources import UnknownCorpusError, corpus_source, sources
from attunebench.suite.manifest import SuiteError, load_manifest

errors = CommandConsole(stderr=True, soft_wrap=True)


def _names(values: list[str]) -> list[str]:
    """Names given as repeated options or comma-separated."""
    return [n.strip() for v in values for n in v.split(",") if n.strip()]


def _corpora(corpora: list[str], suite: str | None) -> list[str]:
    """The corpora named, then those the suite reads (in its manifest's order), each once."""
    try:
        named = _names(corpora) + ([p.corpus for p in load_manifest(suite).parts] if suite else [])
        chosen = list(dict.fromkeys(named)) or sorted(sources().corpora)
        for corpus in chosen:
            corpus_source(corpus)
    except (UnknownCorpusError, SuiteError) as error:
        fail(str(error))
    return chosen


def _download(missing: list[FetchItem]) -> FetchResult:
    """Fetch with a bar per file and one for the whole, on stderr while it is a terminal."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=errors,
        transient=True,
        disable=not errors.is_terminal,
    )
    done: dict[str, int] = {}
    bars: dict[str, TaskID] = {}
    whole = progress.add_task("all files", total=sum(i.source.size for i in missing))

    def on_start(item: FetchItem, have: int) -> None:
        done[item.name] = have
        if item.name not in bars:
            bars[item.name] = progress.add_task(item.name, total=item.source.size)
        progress.update(bars[item.name], completed=have)
        progress.update(whole, completed=sum(done.values()))

    def on_bytes(item: FetchItem, n: int) -> None:
        done[item.name] += n
        whole_file = done[item.name] >= item.source.size
        progress.update(bars[item.name], completed=done[item.name], visible=not whole_file)
        progress.update(whole, completed=sum(done.values()))

    with progress:
        return asyncio.run(fetch_all(missing, on_start, on_bytes))


def fetch(
    corpora: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="CORPUS",
            help="Corpora to fetch (default: every corpus in the sources table).",
            show_default=False,
        ),
    ] = None,
    suite: Annotated[
        str | None,
        typer.Option("--suite", metavar="NAME", help="Fetch every corpus this suite reads."),
    ] = None,
    to: Annotated[
        Path | None,
        typer.Option(
            "--to",
            metavar="DIR",
            help="The corpora folder to write (default: the user's data folder).",
        ),
    ] = None,
    mirror: Annotated[
        str | None,
        typer.Option(
            "--mirror",
            metavar="URL",
            help="Fetch https://HOST/PATH from URL/HOST/PATH (an institution's mirror).",
        ),
    ] = None,
    accept_license: Annotated[
        list[str] | None,
        typer.Option(
            "--accept-license",
            metavar="CORPUS",
            help="Fetch this non-commercial or research-only corpus (repeat, or comma-separated).",
        ),
    ] = None,
) -> None:
    """Download corpora from their pinned upstream files: streamed, resumed, checked against
    the size and SHA-256 of the sources table, and moved into place only whole and verified."""
    chosen = _corpora(corpora or [], suite)
    accepted = _names(accept_license or [])
    unknown = [a for a in accepted if a not in sources().corpora]
    if unknown:
        fail(
            f"--accept-license {unknown[0]}: unknown corpus (known: {', '.join(sources().corpora)})"
        )
    folder = to if to is not None else user_data_dir()
    folder_out(folder, "--to")
    started = time.perf_counter()
    items = plan(chosen, folder, mirror)
    present = [item for item in items if in_place(item)]
    missing = [item for item in items if item not in present]
    # Only what is to be fetched needs its licence accepted: a corpus in place is left alone.
    refused = license_refusals(list(dict.fromkeys(i.corpus for i in missing)), accepted)
    if refused:
        for line in refused[:-1]:
            errors.print("error:", line, style=None, markup=False, highlight=False)
        fail(refused[-1])
    result = _download(missing)
    seconds = time.perf_counter() - started
    for line in result.failed:
        errors.print("error:", line, markup=False, highlight=False)
    typer.echo(
        f"{len(result.fetched)} files fetched ({result.received:,} bytes in {seconds:.2f} s), "
        f"{len(present)} already in place, {len(result.failed)} failed: {folder}"
    )
    for corpus in chosen:
        source = corpus_source(corpus)
        typer.echo(f"  {corpus}: {source.license}. Cite: {source.citation}")
    if result.failed:
        raise typer.Exit(1)
