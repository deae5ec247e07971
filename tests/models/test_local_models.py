"""The local models' files: assembled from their packaged parts and checked against the pinned
SHA-256 when assembled and whenever the record beside them does not vouch for them; a file that
does not match is one line naming it and both digests. Tiny packaged parts stand in for the
real ones; the real files, where assembled, are read back against the table."""

from __future__ import annotations

import hashlib
import os
import re
import time
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from local_harness import PARTS, install_parts, tiny_model

from attunebench.models import assemble, local_models
from attunebench.models.local_models import (
    LOCAL_MODELS,
    LocalModel,
    LocalModelError,
    local_model,
    verified,
)

ROOT = Path(__file__).parents[2]
DIGEST = re.compile(r"\b[0-9a-f]{64}\b")


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny model's parts installed as packages; returns the model cache folder."""
    install_parts(tmp_path / "packages", PARTS)
    monkeypatch.syspath_prepend(str(tmp_path / "packages"))
    return tmp_path / "models"


def one_line_with_both_digests(error: LocalModelError, path: Path, model: LocalModel) -> None:
    message = str(error)
    assert "\n" not in message and str(path) in message
    digests = DIGEST.findall(message)
    assert model.sha256 in digests and len(set(digests)) == 2, message


def test_parts_are_assembled_in_order_and_recorded(parts: Path) -> None:
    model = tiny_model()
    path = verified(model, parts)
    assert path == parts / model.file and path.read_bytes() == b"".join(PARTS)
    assert sorted(p.name for p in parts.iterdir()) == [model.file, f"{model.file}.verified.json"]


def test_a_wrong_pin_refuses_the_assembled_file_and_leaves_nothing(parts: Path) -> None:
    model = tiny_model(sha256="0" * 64)
    with pytest.raises(LocalModelError) as refused:
        verified(model, parts)
    one_line_with_both_digests(refused.value, parts / model.file, model)
    assert list(parts.iterdir()) == []  # neither the file nor the temporary one


def test_a_wrong_byte_in_an_assembled_file_is_refused(parts: Path) -> None:
    model = tiny_model()
    path = verified(model, parts)
    data = bytearray(path.read_bytes())
    data[5] ^= 0x01  # one bit: the same size, another digest
    time.sleep(0.02)  # file times tick with the kernel's coarse clock (up to 10 ms)
    path.write_bytes(bytes(data))
    with pytest.raises(LocalModelError) as refused:
        verified(model, parts)
    one_line_with_both_digests(refused.value, path, model)
    assert hashlib.sha256(bytes(data)).hexdigest() in str(refused.value)


def test_a_file_of_another_size_is_refused(parts: Path) -> None:
    model = tiny_model()
    path = verified(model, parts)
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(LocalModelError) as refused:
        verified(model, parts)
    one_line_with_both_digests(refused.value, path, model)


def test_the_record_spares_the_hashing_until_it_disagrees(
    parts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tiny_model()
    path = verified(model, parts)
    hashed: list[Path] = []
    real_sha256 = local_models.sha256_file

    def counting(file: Path) -> str:
        hashed.append(file)
        return real_sha256(file)

    monkeypatch.setattr(local_models, "sha256_file", counting)
    assert verified(model, parts) == path and hashed == []
    (parts / f"{model.file}.verified.json").write_text('{"sha256": "' + "1" * 64 + '"}')
    assert verified(model, parts) == path and hashed == [path]  # hashed again, re-recorded
    assert verified(model, parts) == path and hashed == [path]


def test_a_missing_package_names_itself_and_the_install(parts: Path) -> None:
    model = tiny_model((*PARTS, b"a fourth part"))  # part 4's package is not installed
    with pytest.raises(LocalModelError, match=r"tiny_gguf_part4 \(part 4 of 4\).*make ladder"):
        verified(model, parts)


def test_an_unknown_name_lists_the_four() -> None:
    with pytest.raises(LocalModelError) as refused:
        local_model("qwen")
    assert all(name in str(refused.value) for name in LOCAL_MODELS)


def test_the_table_names_four_distinct_pinned_models() -> None:
    assert list(LOCAL_MODELS) == [
        "smollm2-135m-instruct",
        "gemma-3-270m",
        "qwen2.5-coder-0.5b-instruct",
        "qwen2.5-coder-1.5b-instruct",
    ]
    models = list(LOCAL_MODELS.values())
    for field in ("name", "alias", "file", "sha256"):
        assert len({getattr(model, field) for model in models}) == 4, field
    assert all(DIGEST.fullmatch(model.sha256) for model in models)
    assert [model.params for model in models] == sorted(model.params for model in models)


def test_every_package_of_the_table_is_installed_by_the_build() -> None:
    """pyproject's extras and the Makefile's --no-deps line install what the table names; the
    1.5B model's parts stay out of the default test install."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    makefile = (ROOT / "Makefile").read_text()
    for model in LOCAL_MODELS.values():
        for package in model.packages:
            assert package in extras["llm"] + extras["ladder"] or f":= {package}" in makefile
    assert set(local_models.QWEN_1_5B.packages) == set(extras["ladder"])


@pytest.mark.slow  # gguf's reader builds every vocabulary entry: 3 s quiet, 8 s under load
def test_smollm2s_file_is_the_model_the_table_says() -> None:
    """SmolLM2's header (the model `make test` installs): a chat template, as the table says,
    and the parameters it counts. The other three were read so when they were pinned; reading
    a header with its vocabulary takes 10-20 s for them."""
    gguf = pytest.importorskip("gguf", reason="the llm extra (gguf) is not installed")
    model = local_models.SMOLLM2
    path = local_models.model_dir() / model.file
    if not path.exists() or os.path.getsize(path) != model.size:
        pytest.skip(f"{path} is not assembled (make ladder-models)")
    reader = gguf.GGUFReader(path)
    assert (reader.get_field("tokenizer.chat_template") is not None) == model.chat
    params = sum(int(t.n_elements) for t in reader.tensors if t.name != "output.weight")
    assert params == model.params


def test_assemble_says_one_line_per_model_and_fails_on_a_mismatch(
    parts: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTUNEBENCH_MODEL_DIR", str(parts))
    good, bad = tiny_model(), replace(tiny_model(), name="tiny-bad", sha256="f" * 64)
    monkeypatch.setitem(LOCAL_MODELS, good.name, good)
    assert assemble.main([good.name]) == 0
    assert capsys.readouterr().out == f"{good.name}: {parts / good.file} (40 bytes, verified)\n"
    monkeypatch.setitem(LOCAL_MODELS, bad.name, bad)
    assert assemble.main([bad.name]) == 1
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and "f" * 64 in said[0] and str(parts / good.file) in said[0]
