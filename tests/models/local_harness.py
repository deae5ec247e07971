"""Small stand-ins for the local models' tests: a model whose parts are installed packages of a
few bytes, and a `llama-server` that answers at once (fake_llama_server.py)."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from attunebench.models import local_models
from attunebench.models.local_models import LocalModel

FAKE_SERVER = Path(__file__).with_name("fake_llama_server.py")
PARTS = (b"GGUF tiny part one;", b" part two;", b" and three.")


def install_parts(root: Path, parts: tuple[bytes, ...], prefix: str = "tiny_gguf_part") -> None:
    """One package per part, as the model packages are: `PREFIXn/data/partNN.bin`."""
    for n, data in enumerate(parts, start=1):
        package = root / f"{prefix}{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{n:02d}.bin").write_bytes(data)


def tiny_model(parts: tuple[bytes, ...] = PARTS, *, sha256: str | None = None) -> LocalModel:
    whole = b"".join(parts)
    return LocalModel(
        name="tiny-test",
        alias="tiny",
        params=1,
        packages=("tiny-gguf==1.0",),
        parts=tuple(f"tiny_gguf_part{n}/data/part{n:02d}.bin" for n in range(1, len(parts) + 1)),
        file="tiny.gguf",
        size=len(whole),
        sha256=sha256 or hashlib.sha256(whole).hexdigest(),
        chat=True,
    )


@dataclass(frozen=True)
class FakeServers:
    """Where the fake servers write their PIDs, and the model they serve."""

    pids_file: Path
    model: LocalModel
    folder: Path  # the model cache

    def pids(self) -> list[int]:
        if not self.pids_file.exists():
            return []
        return [int(line) for line in self.pids_file.read_text().split()]


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
    except OSError:
        return False
    return status != "Z"


def fake_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeServers:
    """`local/tiny-test` resolves to a verified tiny file, served by the fake server."""
    packages = tmp_path / "packages"
    install_parts(packages, PARTS)
    monkeypatch.syspath_prepend(str(packages))
    model = tiny_model()
    monkeypatch.setitem(local_models.LOCAL_MODELS, model.name, model)
    # The same file without a chat template: a base model, as Gemma.
    base = replace(model, name="tiny-base", chat=False)
    monkeypatch.setitem(local_models.LOCAL_MODELS, base.name, base)
    folder = tmp_path / "models"
    monkeypatch.setenv("ATTUNEBENCH_MODEL_DIR", str(folder))
    monkeypatch.setenv("ATTUNEBENCH_LOG_DIR", str(tmp_path / "logs"))
    binary = tmp_path / "llama-server"
    binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_SERVER}" "$@"\n')
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("ATTUNEBENCH_LLAMA_SERVER", str(binary))
    pids = tmp_path / "pids"
    monkeypatch.setenv("FAKE_LLAMA_PIDS", str(pids))
    monkeypatch.delenv("FAKE_LLAMA_EXIT", raising=False)
    assert os.access(binary, os.X_OK)
    return FakeServers(pids, model, folder)
