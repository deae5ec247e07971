"""`local/ANY-NAME` with `options = { file, sha256 }`: a GGUF file of the user's own is served as
the pinned models are (its server started and stopped by PID, its accounting in the ledger,
its chat template read from its header), and a file that does not match its `sha256` stops
the run in one line before any server starts. The server is fake_llama_server.py; the files
are small GGUFs written with gguf's own writer (the `llm` extra)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest
from local_harness import FakeServers, alive, fake_servers
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data.sample import sample_path
from attunebench.engine import RunConfig, read_ledger, read_records, read_run_info, run
from attunebench.engine.wiring import bind_models, close_models
from attunebench.models.gguf_file import header_keys
from attunebench.models.local_models import SMOLLM2, LocalModelError, part_paths
from attunebench.models.modelsfile import ModelEntry, ModelsFileError, load_models_file

gguf = pytest.importorskip("gguf", reason="the llm extra (gguf) is not installed")


def write_gguf(path: Path, *, template: bool = True, tokens: int = 300) -> Path:
    """A GGUF file with a vocabulary (an array of strings to skip), an array of numbers, a
    tensor, and a chat template unless told otherwise."""
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("mine")
    writer.add_token_list([f"token{i}" for i in range(tokens)])
    writer.add_array("mine.numbers", list(range(50)))
    if template:
        writer.add_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}")
    writer.add_uint32("mine.after", 7)
    writer.add_tensor("weights", np.arange(16, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeServers:
    return fake_servers(tmp_path, monkeypatch)


def entry(file: Path, **options: object) -> ModelEntry:
    return ModelEntry.model_validate(
        {"name": "mine", "spec": "local/my-model", "options": {"file": str(file), **options}}
    )


def config(tmp_path: Path, model: ModelEntry, task: str = "outcome") -> RunConfig:
    return RunConfig(
        data=sample_path(),
        out=tmp_path / "run",
        models=(model,),
        tasks=(task,),
        limit=2,
        cache_path=None,
        progress=False,
    )


def test_the_headers_keys_are_gguf_readers(tmp_path: Path) -> None:
    for template in (True, False):
        path = write_gguf(tmp_path / f"{template}.gguf", template=template)
        expected = {key for key in gguf.GGUFReader(path).fields if not key.startswith("GGUF.")}
        assert header_keys(path) == expected
        assert ("tokenizer.chat_template" in expected) is template


def test_smollm2s_packaged_file_has_its_chat_template() -> None:
    try:
        [packaged] = part_paths(SMOLLM2)
    except LocalModelError as error:
        pytest.skip(str(error))
    keys = header_keys(packaged)
    assert "tokenizer.chat_template" in keys and "tokenizer.ggml.tokens" in keys


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"PK\x03\x04 a zip file", "not a GGUF file (it begins b'PK\\x03\\x04'"),
        (b"GGUF\x03\x00\x00\x00\x00\x00", "not a whole GGUF header"),
        (b"GGUF\x01\x00\x00\x00" + bytes(16), "GGUF version 1"),
    ],
)
def test_a_file_that_is_not_gguf_is_one_line(tmp_path: Path, data: bytes, says: str) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(data)
    with pytest.raises(LocalModelError) as refused:
        header_keys(path)
    assert says in str(refused.value) and str(path) in str(refused.value)


async def test_a_file_by_path_serves_a_run_with_its_server_accounted(
    fake: FakeServers, tmp_path: Path
) -> None:
    file = write_gguf(tmp_path / "Mine-Q4.gguf")
    for answer in ("choice", "generate"):
        model = entry(file, sha256=digest(file)).model_copy(update={"answer": answer})
        result = await run(config(tmp_path, model, "outcome" if answer == "choice" else "emotion"))
        assert result.complete and result.failed == 0
        out = tmp_path / "run"
        records = read_records(out / "records.jsonl")
        # the fake's generated answer is one JSON object whatever the task: scored, not failed
        assert records and all(r.mode == answer and r.status != "failed" for r in records)
        ledger = read_ledger(out)
        assert ledger is not None and ledger.servers["mine"].requests > 0
        info = read_run_info(out)
        assert info is not None and info.models[0].spec == "local/my-model"
        shutil.rmtree(out)
    assert len(fake.pids()) == 2 and not any(alive(pid) for pid in fake.pids())


async def test_a_wrong_sha256_is_refused_before_any_server(
    fake: FakeServers, tmp_path: Path
) -> None:
    file = write_gguf(tmp_path / "mine.gguf")
    wrong = "0" * 64
    with pytest.raises(ModelsFileError) as refused:
        await run(config(tmp_path, entry(file, sha256=wrong)))
    message = str(refused.value)
    assert str(file) in message and wrong in message and digest(file) in message
    assert "\n" not in message
    assert fake.pids() == [] and not (tmp_path / "run").exists()


def test_the_cli_refuses_a_wrong_sha256_in_one_line(fake: FakeServers, tmp_path: Path) -> None:
    file = write_gguf(tmp_path / "mine.gguf")
    models = tmp_path / "models.toml"
    models.write_text(
        f'[models.mine]\nspec = "local/my-model"\nanswer = "choice"\n'
        f'options = {{ file = "mine.gguf", sha256 = "{"f" * 64}" }}\n'
    )
    args = ["run", "--data", sample_path(), "--models-file", models, "--model", "mine"]
    args += ["--task", "outcome", "--out", tmp_path / "run", "--no-cache", "--no-progress"]
    result = CliRunner().invoke(app, [str(arg) for arg in args])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(file) in lines[0] and digest(file) in lines[0], lines
    assert fake.pids() == []


async def test_keyed_by_the_weights_not_the_path(fake: FakeServers, tmp_path: Path) -> None:
    """Unpinned, the digest is computed once and recorded; a copy under another name is the
    same model for the cache; a file changed is hashed again."""
    file = write_gguf(tmp_path / "mine.gguf")
    copy = tmp_path / "elsewhere" / "renamed.gguf"
    copy.parent.mkdir()
    shutil.copy(file, copy)
    identities = []
    for path in (file, copy):
        bound = await bind_models([entry(path)], concurrency=4, overrides={}, check=False)
        identities.append(bound["mine"].identity)
        await close_models(bound)
    assert identities[0] == identities[1]
    assert identities[0]["identity"] == f"sha256:{digest(file)}"
    assert "file" not in identities[0]["options"]
    write_gguf(copy, tokens=301)
    bound = await bind_models([entry(copy)], concurrency=4, overrides={}, check=False)
    assert (
        bound["mine"].identity["identity"] == f"sha256:{digest(copy)}" != identities[0]["identity"]
    )
    await close_models(bound)
    assert fake.pids() == []


async def test_a_file_without_a_chat_template_answers_in_choice_mode_only(
    fake: FakeServers, tmp_path: Path
) -> None:
    file = write_gguf(tmp_path / "base.gguf", template=False)
    with pytest.raises(ModelsFileError, match="base model with no chat template"):
        await run(config(tmp_path, entry(file)))
    base = entry(file).model_copy(update={"answer": "choice"})
    assert (await run(config(tmp_path, base))).complete
    [pid] = fake.pids()
    assert not alive(pid)


def test_a_relative_file_is_read_from_the_models_files_folder(tmp_path: Path) -> None:
    models = tmp_path / "conf" / "models.toml"
    models.parent.mkdir()
    models.write_text('[models.mine]\nspec = "local/m"\noptions = { file = "../w/m.gguf" }\n')
    mine = load_models_file(models)["mine"]
    assert Path(mine.options["file"]) == models.parent / ".." / "w" / "m.gguf"


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"file": "absent.gguf"}, "no such file"),
        ({"file": "."}, "a folder; file names the model's .gguf file"),
        ({"file": "mine.gguf", "sha256": "abc"}, "is not 64 hexadecimal digits"),
        ({"sha256": "a" * 64}, "sha256 goes with file"),
    ],
)
def test_an_entry_that_names_no_usable_file_is_one_line(
    fake: FakeServers, tmp_path: Path, options: dict[str, str], says: str
) -> None:
    write_gguf(tmp_path / "mine.gguf")
    models = tmp_path / "models.toml"
    written = ", ".join(f'{key} = "{value}"' for key, value in options.items())
    models.write_text(f'[models.mine]\nspec = "local/m"\noptions = {{ {written} }}\n')
    args = ["run", "--data", sample_path(), "--models-file", models, "--model", "mine"]
    args += ["--out", tmp_path / "run", "--no-cache", "--no-progress"]
    result = CliRunner().invoke(app, [str(arg) for arg in args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and says in lines[0], lines
