"""Bad data: whatever a corpus or dataset file holds, the answer is a located error or a valid file.

Every importer reads a fuzzed copy of a small valid corpus in its own format; the validator's
gates that write files (JSON Lines to Parquet and back) read fuzzed datasets. The only
exceptions allowed are the project's typed errors, naming the file (and line and field where
there is one), and a failure leaves nothing in the output folder: no partial file, no temporary.
"""

from __future__ import annotations

import io
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from importer_seeds import CASES, Case
from mutations import inputs

from attunebench.data import read_conversations
from attunebench.data.importers import ImportFormatError, ImportOptionError, import_to_file
from attunebench.data.parquet import jsonl_to_parquet, parquet_to_jsonl
from attunebench.data.sample import sample_path
from attunebench.data.validate import DatasetError, validate_file

FUZZ = settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SAMPLE = sample_path().read_bytes()


def _fresh(tmp_path: Path) -> Path:
    return Path(tempfile.mkdtemp(dir=tmp_path))


def _check_import_error(error: Exception, case: Case, source: Path) -> None:
    files = {source / name for name in case.files} if not case.source_is_file else {source}
    if isinstance(error, ImportFormatError):
        assert error.location.path in files, f"{error.location.path} is not a corpus file"
        assert error.field and error.problem
        assert str(error).startswith(str(error.location.path))
    else:  # a file, or (nothing imported from it) the corpus folder the user gave
        named = {*files, source}
        assert any(str(path) in str(error) for path in named), f"no file named in: {error}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_seed_imports_cleanly(tmp_path: Path, case: Case) -> None:
    """The seeds are valid, so what the fuzzing finds is about the mutations."""
    source = case.write(tmp_path / "src", case.files[case.fuzzed])
    result = import_to_file(case.make(), source, tmp_path / "out.jsonl")
    assert result.written >= 1 and validate_file(tmp_path / "out.jsonl").ok


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@FUZZ
@given(data=st.data())
def test_a_fuzzed_corpus_imports_or_fails_with_a_located_error(
    tmp_path: Path, case: Case, data: st.DataObject
) -> None:
    content = data.draw(inputs(case.files[case.fuzzed]), label=case.fuzzed)
    work = _fresh(tmp_path)
    source = case.write(work / "src", content)
    out_dir = work / "out"
    out_dir.mkdir()
    out = out_dir / "imported.jsonl"
    try:
        result = import_to_file(case.make(), source, out)
    except (ImportFormatError, ImportOptionError) as error:
        _check_import_error(error, case, source)
        assert list(out_dir.iterdir()) == [], "a failed import left a file behind"
        return
    assert result.written >= 1  # a corpus with nothing to import is an error, above
    assert len(read_conversations(out)) == result.written
    report = validate_file(out)
    assert report.ok, report.problems[:3]
    assert report.conversations == result.written


def _check_dataset_error(error: DatasetError, name: str) -> None:
    assert error.count >= 1 and error.problems
    for problem in error.problems:
        assert problem.file == name and problem.message
        assert str(problem).startswith(name)


@FUZZ
@given(content=inputs(SAMPLE))
def test_a_fuzzed_dataset_converts_to_parquet_or_fails_cleanly(
    tmp_path: Path, content: bytes
) -> None:
    work = _fresh(tmp_path)
    src = work / "data.jsonl"
    src.write_bytes(content)
    out_dir = work / "out"
    out_dir.mkdir()
    try:
        written = jsonl_to_parquet(src, out_dir / "data.parquet")
    except DatasetError as error:
        _check_dataset_error(error, str(src))
        assert all(p.line is None or p.line >= 1 for p in error.problems)
        assert list(out_dir.iterdir()) == []
        return
    assert validate_file(src).ok
    assert pq.ParquetFile(out_dir / "data.parquet").metadata.num_rows == written


def _sample_parquet() -> bytes:
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "sample.parquet"
        jsonl_to_parquet(sample_path(), path)
        buffer.write(path.read_bytes())
    return buffer.getvalue()


@FUZZ
@given(content=inputs(_sample_parquet()))
def test_a_fuzzed_parquet_file_converts_or_fails_cleanly(tmp_path: Path, content: bytes) -> None:
    work = _fresh(tmp_path)
    src = work / "data.parquet"
    src.write_bytes(content)
    out_dir = work / "out"
    out_dir.mkdir()
    try:
        written = parquet_to_jsonl(src, out_dir / "data.jsonl")
    except DatasetError as error:
        _check_dataset_error(error, str(src))
        assert list(out_dir.iterdir()) == []
        return
    assert validate_file(out_dir / "data.jsonl").ok
    assert len(read_conversations(out_dir / "data.jsonl")) == written


def test_a_damaged_parquet_page_is_a_dataset_error(tmp_path: Path) -> None:
    """Found by fuzzing: a page that fails to decode was an OSError from deep in pyarrow."""
    data = bytearray(_sample_parquet())
    data[len(data) // 3 : len(data) // 3 + 64] = b"\xff" * 64  # inside the data pages
    src = tmp_path / "damaged.parquet"
    src.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match="cannot read as Parquet") as caught:
        parquet_to_jsonl(src, tmp_path / "out" / "data.jsonl")
    _check_dataset_error(caught.value, str(src))
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_a_repeated_goemotions_comment_is_a_located_error(tmp_path: Path) -> None:
    """Found by fuzzing: a comment id twice in a file wrote a dataset with duplicate ids."""
    case = next(c for c in CASES if c.name == "goemotions")
    first = case.files["dev.tsv"].split(b"\n")[0]
    source = case.write(tmp_path / "src", case.files["dev.tsv"] + first + b"\n")
    out = tmp_path / "out" / "imported.jsonl"
    with pytest.raises(ImportFormatError, match="repeats the comment on line 1") as caught:
        import_to_file(case.make(), source, out)
    assert caught.value.location.line == 4 and caught.value.field == "comment_id"
    assert not out.exists()


def test_a_uss_session_without_a_user_message_is_dropped(tmp_path: Path) -> None:
    """Found by fuzzing: a session of SYSTEM lines became a conversation with no turns."""
    case = next(c for c in CASES if c.name == "uss")
    lonely = b"SYSTEM\tHello?\tgeneral-greet\t\nUSER\tOVERALL\t\t3,3,3\n\n"
    source = case.write(tmp_path / "src", lonely + case.files["MWOZ.txt"])
    out = tmp_path / "imported.jsonl"
    result = import_to_file(case.make(), source, out)
    assert result.written == 2 and result.dropped()["sessions without a user message"] == 1
    assert validate_file(out).ok
    assert [c.id for c in read_conversations(out)] == ["uss-mwoz-0001", "uss-mwoz-0002"]


def test_coverage_guided_fuzzing_finds_no_crash(tmp_path: Path) -> None:
    """atheris (libFuzzer) from the valid seeds, a bounded number of runs, a fixed seed."""
    script = Path(__file__).with_name("atheris_fuzz.py")
    # Linux carries a process's peak memory across fork and exec, so the fuzzer's reading of
    # its own peak starts at this test process's: its 2 GB budget is counted on top of that.
    inherited_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    flags = ["-runs=4000", "-seed=1", "-max_len=8192", "-max_total_time=60", "-timeout=20"]
    flags += [f"-rss_limit_mb={inherited_mb + 2048}", f"-artifact_prefix={tmp_path}/"]
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "work"), str(tmp_path / "corpus"), *flags],
        cwd=script.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Done 4000 runs" in done.stderr
