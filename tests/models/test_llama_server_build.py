"""The Makefile's llama-server build (issue 43): two builds at once on one machine both succeed.

They once shared one source folder in the user's cache, and one deleted it while the other
was compiling. The recipe runs here as written, with `pip download` and `cmake` replaced by
stand-ins that take a second to "compile" and fail if their build folder went away meanwhile
(the real build takes ten minutes, and downloads): the folders, the order of the steps and the
move into the cache are the Makefile's own."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
BINARY = "whole llama-server\n"

PIP = """#!/bin/sh
# pip download ... --dest DIR SPEC: an sdist holding vendor/llama.cpp
while [ "$1" != "--dest" ]; do shift; done
staging=$(mktemp -d)
mkdir -p "$staging/llama_cpp_python-0.3.36/vendor/llama.cpp"
tar czf "$2/llama_cpp_python-0.3.36.tar.gz" -C "$staging" llama_cpp_python-0.3.36
rm -rf "$staging"
"""
CMAKE = """#!/bin/sh
# configure: cmake -S SRC -B BUILD ...; build: cmake --build BUILD ...
if [ "$1" = "--build" ]; then
  test -f "$2/configured" || exit 1
  sleep 1.5
  test -f "$2/configured" || { echo "build folder deleted while compiling" >&2; exit 1; }
  mkdir -p "$2/bin" && printf 'whole llama-server\\n' > "$2/bin/llama-server"
else
  test -d "$2" && mkdir -p "$4" && touch "$4/configured"
fi
"""


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.mark.timeout(60)
def test_two_builds_at_once_both_succeed(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("no make")
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    executable(venv_bin / "python", "#!/bin/sh\n")
    executable(venv_bin / "pip", PIP)
    tools = tmp_path / "tools"
    tools.mkdir()
    executable(tools / "cmake", CMAKE)
    executable(tools / "g++", "#!/bin/sh\n")
    cache = tmp_path / "cache" / "llama-server-test"
    command = ["make", "-s", "-f", str(ROOT / "Makefile"), f"VENV={tmp_path / 'venv'}"]
    command += [f"LLAMA_CACHE={cache}", str(cache / "llama-server")]
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    first = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)  # the second starts while the first compiles
    second = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    said = [process.communicate(timeout=45)[1] for process in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, said
    assert (cache / "llama-server").read_text() == BINARY
    assert [p.name for p in cache.parent.iterdir()] == [cache.name]  # no build folder left
    assert [p.name for p in cache.iterdir()] == ["llama-server"]  # no partial copy


@pytest.mark.timeout(60)
def test_a_failed_build_leaves_nothing_in_the_cache(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("no make")
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    executable(venv_bin / "python", "#!/bin/sh\n")
    executable(venv_bin / "pip", PIP)
    tools = tmp_path / "tools"
    tools.mkdir()
    executable(tools / "cmake", '#!/bin/sh\n[ "$1" = "--build" ] && exit 2\nmkdir -p "$4"\n')
    executable(tools / "g++", "#!/bin/sh\n")
    cache = tmp_path / "cache" / "llama-server-test"
    command = ["make", "-s", "-f", str(ROOT / "Makefile"), f"VENV={tmp_path / 'venv'}"]
    command += [f"LLAMA_CACHE={cache}", str(cache / "llama-server")]
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, timeout=45)
    assert done.returncode != 0
    assert [p.name for p in cache.parent.iterdir()] == [cache.name]  # its folder removed
    assert list(cache.iterdir()) == []  # and no binary
