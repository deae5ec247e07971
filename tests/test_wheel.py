"""The package stands alone: the wheel built from this checkout holds every non-Python file the
package reads, and, installed into a fresh virtual environment, runs from a folder outside the
repository with the wheel's code, not `src/`: `demo`, `suite list`, `data schema`, and the
collection app's `collect init` and `serve`.

The fresh environment gets the dependencies already installed beside the test (a `.pth` line
naming their site-packages, whose own `.pth` files, the editable checkout's among them, are not
read), and the wheel itself with `pip install --no-deps`, so nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "attunebench"
SHARED_SITE = Path(sysconfig.get_paths()["purelib"])


def _build(tmp: Path) -> Path:
    """The wheel, built from a copy of the sources (the build writes beside them)."""
    source = tmp / "source"
    source.mkdir()
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
    subprocess.run([*pip, "-w", str(tmp / "dist"), str(source)], check=True, capture_output=True)
    (wheel,) = (tmp / "dist").glob("attunebench-*.whl")
    return wheel


def _venv(tmp: Path, wheel: Path) -> Path:
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "installed-dependencies.pth").write_text(f"{SHARED_SITE}\n")
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps"]
    subprocess.run([*install, "--no-index", str(wheel)], check=True, capture_output=True)
    return venv


def _run(venv: Path, cwd: Path, *args: str) -> str:
    result = subprocess.run(
        [venv / "bin" / "attunebench", *args],
        cwd=cwd,
        env=_environment(cwd),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _environment(cwd: Path) -> dict[str, str]:
    """This environment, less what points at the checkout or its corpora."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ATTUNEBENCH_DATA_DIR")}
    return {**env, "XDG_DATA_HOME": str(cwd / "data")}


def test_the_wheel_holds_every_file_the_package_reads(tmp_path: Path) -> None:
    wheel = _build(tmp_path)
    inside = set(zipfile.ZipFile(wheel).namelist())
    read = {
        p.relative_to(PACKAGE.parent).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc")
    }
    assert "attunebench/data/sources.json" in read and "attunebench/py.typed" in read
    assert read - inside == set()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _serve(venv: Path, cwd: Path, db: str) -> None:
    """`collect serve` answers its pages and static files; stopped by its PID."""
    port = _free_port()
    args = ["collect", "serve", "--db", db, "--port", str(port)]
    server = subprocess.Popen(
        [venv / "bin" / "attunebench", *args],
        cwd=cwd,
        env=_environment(cwd),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as page:
                    assert page.status == 200 and b"<html" in page.read().lower()
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "not serving"
                time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/collect.css") as css:
            assert css.status == 200 and css.read()
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.slow  # the demo is most of it (about a minute here)
def test_the_installed_wheel_runs_outside_the_checkout(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the collect extra is not installed")
    venv = _venv(tmp_path, _build(tmp_path))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import attunebench; print(attunebench.__file__)"],
        cwd=outside,
        env=_environment(outside),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv) and not Path(where).is_relative_to(REPO)
    assert "open-v1-mini" in _run(venv, outside, "suite", "list")
    assert json.loads(_run(venv, outside, "data", "schema"))["title"] == "Conversation"
    demo = _run(venv, outside, "demo", "--out", "demo", "--resamples", "100")
    assert "report: demo/report.html" in demo and (outside / "demo" / "report.html").is_file()
    shutil.copy(REPO / "examples" / "study.toml", outside / "study.toml")
    db = f"sqlite:///{outside / 'study.db'}"
    init = ["collect", "init", "--study", "study.toml", "--db", db, "--no-check-models"]
    _run(venv, outside, *init)
    _serve(venv, outside, db)
