"""Download corpora from the sources table: streamed into `NAME.part`, resumed after a cut,
moved into place only whole and verified (docs/data.md, "Getting the corpora").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp

from attunebench.data.jsonl import sha256_file
from attunebench.data.sources import SourceFile, corpus_source, mirrored

ATTEMPTS = 3  # tries per file in one fetch, each resuming what the last one received
PARALLEL = 4  # files downloaded at once
CHUNK = 1 << 16
TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)


class FetchError(Exception):
    """One file could not be fetched; the message says which, from where, and why, in one line."""


class UnreachableError(FetchError):
    """The host could not be reached at all (no network, a wrong mirror)."""

    def __init__(self, message: str, host: str) -> None:
        super().__init__(message)
        self.host = host


@dataclass(frozen=True)
class FetchItem:
    corpus: str
    source: SourceFile
    target: Path
    url: str  # the upstream URL, or its place on the mirror

    @property
    def name(self) -> str:
        return f"{self.corpus}/{self.source.file}"

    @property
    def partial(self) -> Path:
        return self.target.with_name(self.target.name + ".part")


@dataclass
class FetchResult:
    fetched: list[FetchItem] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # one line each
    received: int = 0  # bytes that came over the network


# What the caller is told as a download goes: (item, bytes already there) when it starts, then
# (item, bytes received) after each chunk.
Progress = Callable[[FetchItem, int], None]


def plan(corpora: Sequence[str], to: Path, mirror: str | None) -> list[FetchItem]:
    """Every file of these corpora, with where it goes under `to` and where it is fetched from."""
    return [
        FetchItem(corpus, source, to / corpus / source.file, mirrored(source.url, mirror))
        for corpus in corpora
        for source in corpus_source(corpus).files
    ]


def license_refusals(corpora: Sequence[str], accepted: Sequence[str]) -> list[str]:
    """One line for each non-commercial or research-only corpus not accepted by name."""
    lines = []
    for corpus in corpora:
        source = corpus_source(corpus)
        if source.non_commercial and corpus not in accepted:
            lines.append(
                f"{corpus} is licensed {source.license}: fetch it only if your use is allowed, "
                f"with --accept-license {corpus}"
            )
    return lines


def in_place(item: FetchItem) -> bool:
    """Whether the file is already there, whole and with the table's digest."""
    target = item.target
    return (
        target.is_file()
        and target.stat().st_size == item.source.size
        and sha256_file(target) == item.source.sha256
    )


def _verify_and_place(item: FetchItem) -> None:
    """Move the whole `.part` into place if it is the table's file; else delete it."""
    part, expected = item.partial, item.source
    size = part.stat().st_size
    found = sha256_file(part) if size == expected.size else None
    if found != expected.sha256:
        part.unlink()
        got = f"SHA-256 {found}" if found else f"{size} bytes"
        wanted = expected.sha256 if found else expected.size
        raise FetchError(f"{item.name}: {got} from {item.url}, expected {wanted}; nothing kept")
    part.replace(item.target)


async def _stream(
    session: aiohttp.ClientSession, item: FetchItem, on_start: Progress, on_bytes: Progress
) -> None:
    """One request: the rest of the file (or all of it) appended to the `.part`."""
    have = item.partial.stat().st_size if item.partial.exists() else 0
    if have >= item.source.size:
        return  # all there: the digest decides
    headers = {"Range": f"bytes={have}-"} if have else {}
    async with session.get(item.url, headers=headers) as response:
        if response.status == 416:  # the kept bytes are not the start of this file
            item.partial.unlink()
            raise FetchError(
                f"{item.name}: {item.url} cannot resume from byte {have} (HTTP 416); the partial "
                "file is deleted, fetch again"
            )
        if response.status not in (200, 206):
            raise FetchError(f"{item.name}: {item.url} answered HTTP {response.status}")
        if response.status == 200:
            have = 0  # the server ignored the range: it sends the whole file again
        on_start(item, have)
        with item.partial.open("ab" if have else "wb") as handle:
            async for chunk in response.content.iter_chunked(CHUNK):
                handle.write(chunk)
                on_bytes(item, len(chunk))
                have += len(chunk)
                if have > item.source.size:
                    break  # longer than the table's file: not it (the size check says so)


async def download(
    session: aiohttp.ClientSession, item: FetchItem, on_start: Progress, on_bytes: Progress
) -> None:
    """Fetch one file into place, resuming after a cut connection; `FetchError` if it cannot."""
    item.target.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, ATTEMPTS + 1):
        try:
            await _stream(session, item, on_start, on_bytes)
            break
        except aiohttp.ClientConnectorError as error:
            reason = error.os_error.strerror or error.os_error
            message = f"{item.name}: could not reach {item.url} ({reason})"
            raise UnreachableError(message, urlsplit(item.url).netloc) from None
        except (aiohttp.ClientPayloadError, aiohttp.ClientOSError, TimeoutError) as error:
            if attempt == ATTEMPTS:
                kept = item.partial.stat().st_size if item.partial.exists() else 0
                raise FetchError(
                    f"{item.name}: the connection to {item.url} broke {ATTEMPTS} times "
                    f"({type(error).__name__}); {kept} bytes kept, fetch again to resume"
                ) from None
        except aiohttp.ClientError as error:
            raise FetchError(f"{item.name}: {item.url}: {error}") from None
    _verify_and_place(item)


async def fetch_all(
    items: Sequence[FetchItem], on_start: Progress, on_bytes: Progress
) -> FetchResult:
    """Fetch every item, `PARALLEL` at a time; a failure of one file does not stop the others,
    and every file placed stays placed. A host that cannot be reached is one line, however many
    files it was to give."""
    result = FetchResult()
    gate = asyncio.Semaphore(PARALLEL)
    unreached: dict[str, list[int]] = {}  # host -> [its line in failed, files after the first]

    def counted(item: FetchItem, n: int) -> None:
        result.received += n
        on_bytes(item, n)

    async def one(session: aiohttp.ClientSession, item: FetchItem) -> None:
        async with gate:
            try:
                await download(session, item, on_start, counted)
                result.fetched.append(item)
            except UnreachableError as error:
                if error.host in unreached:
                    unreached[error.host][1] += 1
                else:
                    unreached[error.host] = [len(result.failed), 0]
                    result.failed.append(str(error))
            except FetchError as error:
                result.failed.append(str(error))
            except OSError as error:  # the folder written to, not the network
                result.failed.append(f"{item.name}: {error.filename}: {error.strerror}")

    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        await asyncio.gather(*(one(session, item) for item in items))
    for line, more in unreached.values():
        if more:
            files = "file" if more == 1 else "files"
            result.failed[line] += f"; and {more} more {files} from there"
    return result
