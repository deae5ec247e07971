"""`attunebench data fetch` against a local mirror on 127.0.0.1 (the real download code, HTTP
Range and all): planted files that every run exercises, with planted faults (a flipped byte, a
connection cut halfway then resumed, a 404, an unreachable host, an unaccepted licence); and
the shared corpora served in the mirror layout, fetched into an empty user data folder from a
folder with no ../shared beside it, then run as a suite with its digests checked."""

from __future__ import annotations

import hashlib
import json
import random
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import attunebench.cli.data_fetch
import attunebench.data.sources
from attunebench.cli import app
from attunebench.data.fetch import CHUNK
from attunebench.data.locations import corpus_dir, user_data_dir
from attunebench.data.sources import CorpusSource, SourceFile, SourcesTable, sources
from attunebench.suite import load_manifest, suite_digest
from testkit.servers.mirror import MirrorServer, mirror_layout, mirror_path

HOST = "files.example.org"


def _planted(folder: Path) -> dict[str, Path]:
    """Two files, one large enough to be cut halfway (300 kB of seeded random bytes)."""
    folder.mkdir(parents=True)
    big, small = folder / "big.bin", folder / "notes.txt"
    big.write_bytes(random.Random(7).randbytes(300_000))
    small.write_text("planted corpus\n")
    return {"big.bin": big, "notes.txt": small}


def _entry(name: str, path: Path) -> SourceFile:
    data = path.read_bytes()
    return SourceFile(
        file=name,
        url=f"https://{HOST}/lab/planted/0123abc/{name}",
        repo="lab/planted",
        commit="0123abc",
        path=name,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """A sources table of two planted corpora (`planted`, and `planted_nc`, non-commercial),
    and their files in the mirror layout: URL path -> file served."""
    files = _planted(tmp_path / "upstream")
    entries = [_entry(name, path) for name, path in files.items()]
    common = {"citation": "Planted (2026).", "files": entries}
    table = SourcesTable(
        format="attunebench-sources/v1",
        corpora={
            "planted": CorpusSource(license="Apache-2.0", non_commercial=False, **common),
            "planted_nc": CorpusSource(license="CC BY-NC 4.0", non_commercial=True, **common),
        },
    )
    for module in (attunebench.data.sources, attunebench.cli.data_fetch):
        monkeypatch.setattr(module, "sources", lambda: table)
    yield {mirror_path(e.url): files[e.file] for e in entries}


def _fetch(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["data", "fetch", *args])
    return result.exit_code, result.output


def test_planted_files_are_fetched_verified_and_not_fetched_twice(
    planted: dict[str, Path], tmp_path: Path
) -> None:
    to = tmp_path / "corpora"
    with MirrorServer(planted) as mirror:
        code, output = _fetch("planted", "--mirror", mirror.base_url, "--to", str(to))
        assert code == 0, output
        for upstream in planted.values():
            assert (to / "planted" / upstream.name).read_bytes() == upstream.read_bytes()
        assert "2 files fetched (300,015 bytes" in output and "Cite: Planted (2026)." in output
        asked = len(mirror.requests)
        code, output = _fetch("planted", "--mirror", mirror.base_url, "--to", str(to))
    assert code == 0 and "0 files fetched" in output and "2 already in place" in output
    assert len(mirror.requests) == asked  # verified in place: nothing asked of the server
    assert not list(to.rglob("*.part"))


def test_a_connection_cut_halfway_is_resumed_with_a_range_request(
    planted: dict[str, Path], tmp_path: Path
) -> None:
    big = mirror_path(f"https://{HOST}/lab/planted/0123abc/big.bin")
    to = tmp_path / "corpora"
    with MirrorServer(planted, cut={big: 1}) as mirror:
        code, output = _fetch("planted", "--mirror", mirror.base_url, "--to", str(to))
    assert code == 0, output
    assert (to / "planted" / "big.bin").read_bytes() == planted[big].read_bytes()
    tries = [rng for path, rng in mirror.requests if path == big]
    assert tries[0] is None and tries[1] is not None  # the second asked only for the rest
    resumed_from = int(tries[1].removeprefix("bytes=").removesuffix("-"))
    assert 0 < resumed_from <= 150_000


def test_a_download_cut_every_time_keeps_its_bytes_for_the_next_fetch(
    planted: dict[str, Path], tmp_path: Path
) -> None:
    big = mirror_path(f"https://{HOST}/lab/planted/0123abc/big.bin")
    to = tmp_path / "corpora"
    with MirrorServer(planted, cut={big: 3}) as mirror:
        code, output = _fetch("planted", "--mirror", mirror.base_url, "--to", str(to))
        assert code == 1
        line = next(x for x in output.splitlines() if "big.bin" in x)
        assert "broke 3 times" in line and "fetch again to resume" in line
        kept = (to / "planted" / "big.bin.part").stat().st_size
        assert kept > 0 and not (to / "planted" / "big.bin").exists()
        assert (to / "planted" / "notes.txt").is_file()  # the other file is kept, verified
        code, output = _fetch("planted", "--mirror", mirror.base_url, "--to", str(to))
    assert code == 0, output
    assert mirror.requests[-1] == (big, f"bytes={kept}-")
    assert (to / "planted" / "big.bin").read_bytes() == planted[big].read_bytes()


def test_a_flipped_byte_is_refused_with_both_digests_and_nothing_kept(
    planted: dict[str, Path], tmp_path: Path
) -> None:
    big = mirror_path(f"https://{HOST}/lab/planted/0123abc/big.bin")
    flipped = tmp_path / "flipped.bin"
    data = bytearray(planted[big].read_bytes())
    data[123_456] ^= 0x01
    flipped.write_bytes(data)
    to = tmp_path / "corpora"
    with MirrorServer({**planted, big: flipped}) as mirror:
        code, output = _fetch("planted", "--mirror", mirror.base_url, "--to", str(to))
    assert code == 1
    (line,) = [x for x in output.splitlines() if x.startswith("error:")]
    expected = hashlib.sha256(planted[big].read_bytes()).hexdigest()
    found = hashlib.sha256(bytes(data)).hexdigest()
    assert "planted/big.bin" in line and expected in line and found in line
    assert "nothing kept" in line
    assert sorted(p.name for p in (to / "planted").iterdir()) == ["notes.txt"]


def test_a_404_and_an_unreachable_host_are_one_line_each(
    planted: dict[str, Path], tmp_path: Path
) -> None:
    small = mirror_path(f"https://{HOST}/lab/planted/0123abc/notes.txt")
    to = tmp_path / "corpora"
    with MirrorServer({small: planted[small]}) as mirror:
        code, output = _fetch("planted", "--mirror", mirror.base_url, "--to", str(to))
    assert code == 1
    (line,) = [x for x in output.splitlines() if x.startswith("error:")]
    assert f"planted/big.bin: {mirror.base_url}/{HOST}/" in line and "HTTP 404" in line
    assert (to / "planted" / "notes.txt").is_file()
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    elsewhere = tmp_path / "elsewhere"
    code, output = _fetch("planted", "--mirror", f"http://127.0.0.1:{port}", "--to", str(elsewhere))
    assert code == 1
    (line,) = [x for x in output.splitlines() if x.startswith("error:")]
    assert f": could not reach http://127.0.0.1:{port}/{HOST}/lab/planted/0123abc/" in line
    assert line.endswith("; and 1 more file from there")
    assert not list(elsewhere.rglob("*.*"))


def test_a_non_commercial_corpus_needs_its_licence_accepted(
    planted: dict[str, Path], tmp_path: Path
) -> None:
    to = tmp_path / "corpora"
    with MirrorServer(planted) as mirror:
        code, output = _fetch("planted", "planted_nc", "--mirror", mirror.base_url, "--to", str(to))
        assert code == 2 and not mirror.requests and not to.exists()
        assert output.strip() == (
            "error: planted_nc is licensed CC BY-NC 4.0: fetch it only if your use is allowed, "
            "with --accept-license planted_nc"
        )
        args = ["planted", "planted_nc", "--mirror", mirror.base_url, "--to", str(to)]
        code, output = _fetch(*args, "--accept-license", "planted_nc")
        assert code == 0, output
        assert (to / "planted_nc" / "big.bin").is_file()
        code, output = _fetch("planted_nc", "--mirror", mirror.base_url, "--to", str(to))
    assert code == 0 and "2 already in place" in output  # nothing to fetch, nothing to accept
    code, output = _fetch("nothing", "--to", str(to))
    assert code == 2 and "unknown corpus 'nothing' (known: planted, planted_nc)" in output


def test_corpora_are_looked_up_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit, user, shared = tmp_path / "explicit", tmp_path / "xdg", tmp_path / "shared" / "data"
    for folder, corpora in ((explicit, ["a"]), (user / "attunebench" / "corpora", ["a", "b"])):
        for corpus in corpora:
            (folder / corpus).mkdir(parents=True)
    for corpus in ("a", "b", "c"):
        (shared / corpus).mkdir(parents=True)
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")  # ../shared/data is `shared`
    monkeypatch.setenv("ATTUNEBENCH_DATA_DIR", str(explicit))
    monkeypatch.setenv("XDG_DATA_HOME", str(user))
    assert corpus_dir("a") == explicit / "a"
    assert corpus_dir("b") == user / "attunebench" / "corpora" / "b"
    assert corpus_dir("c").resolve() == (shared / "c").resolve()
    assert corpus_dir("d") == user_data_dir() / "d" == user / "attunebench" / "corpora" / "d"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_data_dir() == tmp_path / "home" / ".local" / "share" / "attunebench" / "corpora"


def test_the_table_holds_every_file_the_suites_read() -> None:
    table = sources().corpora
    for suite in ("open-v1", "open-v1-mini"):
        for part in load_manifest(suite).parts:
            files = {f.file: f for f in table[part.corpus].files}
            assert table[part.corpus].non_commercial == part.non_commercial
            for name, digest in part.files.items():
                assert files[name].sha256 == digest
                assert f"/{files[name].commit}/" in files[name].url  # pinned to a commit


@pytest.fixture
def no_corpora(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user with no corpora: a current folder with no ../shared, no ATTUNEBENCH_DATA_DIR,
    and an empty data folder."""
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    monkeypatch.chdir(home / "work")
    monkeypatch.delenv("ATTUNEBENCH_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    return home


def test_a_missing_corpus_names_the_command_that_fetches_it(no_corpora: Path) -> None:
    out = no_corpora / "esconv.jsonl"
    result = CliRunner().invoke(app, ["data", "import", "esconv", "--out", str(out)])
    assert result.exit_code == 1
    assert "corpus esconv not found" in result.output
    assert "attunebench data fetch esconv --accept-license esconv" in result.output


@pytest.mark.slow  # building the suite from the fetched corpora is most of it
def test_the_mini_suite_fetched_through_a_mirror_runs_with_its_digests_checked(
    data_dir: Path, no_corpora: Path
) -> None:
    layout = mirror_layout(data_dir.resolve(), ["esconv", "convai1", "topical_chat"])
    with MirrorServer(layout) as mirror:
        fetch = ["data", "fetch", "--suite", "open-v1-mini", "--mirror", mirror.base_url]
        result = CliRunner().invoke(app, [*fetch, "--accept-license", "esconv"])
    assert result.exit_code == 0, result.output
    assert "0 failed" in result.output
    assert all(rng is None for _, rng in mirror.requests)
    assert corpus_dir("esconv") == no_corpora / "data" / "attunebench" / "corpora" / "esconv"
    out = no_corpora / "run"
    args = ["run", "--suite", "open-v1-mini", "--model", "baseline/random", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--no-cache", "--no-progress"])
    assert result.exit_code == 0, result.output
    info = json.loads((out / "run.json").read_text())
    assert info["suite"]["digest"] == suite_digest("open-v1-mini")
    assert info["dataset_sha256"] == load_manifest("open-v1-mini").dataset_sha256


def test_kept_bytes_the_server_cannot_resume_are_deleted(
    planted: dict[str, Path], tmp_path: Path
) -> None:
    """A `.part` longer than the served file (the upstream file changed): HTTP 416, one line,
    and the kept bytes are deleted so that the next fetch starts over."""
    big = mirror_path(f"https://{HOST}/lab/planted/0123abc/big.bin")
    shorter = tmp_path / "shorter.bin"
    shorter.write_bytes(planted[big].read_bytes()[:100])
    to = tmp_path / "corpora"
    (to / "planted").mkdir(parents=True)
    (to / "planted" / "big.bin.part").write_bytes(planted[big].read_bytes()[:200])
    with MirrorServer({**planted, big: shorter}) as mirror:
        code, output = _fetch("planted", "--mirror", mirror.base_url, "--to", str(to))
    assert code == 1
    (line,) = [x for x in output.splitlines() if x.startswith("error:")]
    assert "planted/big.bin: " in line and "cannot resume from byte 200 (HTTP 416)" in line
    assert sorted(p.name for p in (to / "planted").iterdir()) == ["notes.txt"]


def test_a_longer_file_is_refused_by_its_size_and_nothing_kept(
    planted: dict[str, Path], tmp_path: Path
) -> None:
    big = mirror_path(f"https://{HOST}/lab/planted/0123abc/big.bin")
    longer = tmp_path / "longer.bin"
    longer.write_bytes(planted[big].read_bytes() + b"\0" * 500_000)
    to = tmp_path / "corpora"
    with MirrorServer({**planted, big: longer}) as mirror:
        code, output = _fetch("planted", "--mirror", mirror.base_url, "--to", str(to))
    assert code == 1
    (line,) = [x for x in output.splitlines() if x.startswith("error:")]
    assert "planted/big.bin: " in line and ", expected 300000; nothing kept" in line
    received = int(line.split(": ")[2].split(" bytes")[0])
    assert 300_000 < received <= 300_000 + CHUNK  # it stopped once past the table's size
    assert sorted(p.name for p in (to / "planted").iterdir()) == ["notes.txt"]
