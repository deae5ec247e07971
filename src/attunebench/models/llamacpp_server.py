"""llama.cpp's own `llama-server` for `local/` models, the end-to-end tests and the benchmarks.

The binary is built by `make llama-server`, and found as ATTUNEBENCH_LLAMA_SERVER, in the
environment's `bin`, or on PATH. The server binds 127.0.0.1 on a free port, runs as a child
process stopped by its PID, and serves one request at a time, so a conversation's prompts
reach it back to back and reuse their shared prefix. Each answer's `timings` are summed
(`account`) and reported with the time it was up (`usage`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import IO

from attunebench.models.local_models import GEMMA, LocalModelError
from attunebench.records import ServerUsage

SERVER_VARIABLE = "ATTUNEBENCH_LLAMA_SERVER"
START_TIMEOUT_S = 180.0  # loading a model from a cold disk on two busy cores


def cpp_server() -> Path | None:
    """llama.cpp's `llama-server`, if one is at hand (see the module docstring)."""
    explicit = os.environ.get(SERVER_VARIABLE)
    if explicit:
        return Path(explicit)
    beside = Path(sys.prefix) / "bin" / "llama-server"
    if beside.exists():
        return beside
    found = shutil.which("llama-server")
    return Path(found) if found else None


# What llama-server's `timings` holds that a run sums: milliseconds reading the prompt and
# generating, prompt tokens evaluated and reused from the prefix cache, tokens generated.
TIMINGS = ("prompt_ms", "prompt_n", "cache_n", "predicted_ms", "predicted_n")


def server_missing() -> str | None:
    """Why no server can be started here (no llama-server binary), or None."""
    if cpp_server() is not None:
        return None
    return f"no llama-server binary (make llama-server, or set {SERVER_VARIABLE})"


# Set while a stop signal is being handled (engine.stopping): a server still loading its model
# stops waiting and is stopped. The wait blocks the run's event loop, so a cancelled run would
# otherwise hold its server until the model had loaded (a scheduler's SIGKILL comes first).
_stopping = threading.Event()


def stopping(now: bool) -> None:
    """Say that the process is being stopped (True), or no longer is (False)."""
    if now:
        _stopping.set()
    else:
        _stopping.clear()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LlamaServer:
    """`with LlamaServer(model_path, log=path) as server: server.base_url`."""

    def __init__(
        self,
        model: Path,
        *,
        log: Path,
        alias: str = GEMMA.name,
        n_ctx: int = 2048,
        threads: int | None = None,
        threads_batch: int | None = None,
        verbose: bool = False,
    ) -> None:
        self.model = model
        self.alias = alias
        self.binary = cpp_server()
        self.log = log
        self.n_ctx = n_ctx
        # Half the cores: llama.cpp's threads wait on each other at every layer, so one
        # descheduled by the client or the harness stalls them all (on 2 busy cores, 2 threads
        # generated 5 tokens/s where 1 thread generated 24).
        self.threads = threads or max(1, (os.cpu_count() or 2) // 2)
        # Threads for reading a prompt (the same unless asked). A prompt gives each step enough
        # work that a second thread doubled Qwen 0.5B's prompt speed on 2 idle cores (95 -> 189
        # tokens/s), but on busy ones it lost (93 -> 74 while other jobs kept the load at 2).
        self.threads_batch = threads_batch or self.threads
        # llama.cpp logs each request's prefix-cache hit and timings when verbose (see
        # `evaluated_tokens`); off by default, as it writes a few lines per call.
        self.verbose = verbose
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._log_handle: IO[bytes] | None = None
        self._started: float | None = None  # time.monotonic() at start, and at stop
        self._stopped: float | None = None
        self._timings: dict[str, float] = dict.fromkeys(TIMINGS, 0.0)
        self._requests = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        if self.binary is None:
            raise LocalModelError(server_missing() or "no llama-server binary")
        # --swa-full: Gemma 3 attends to the last 512 tokens in most layers, and with a
        # window-sized cache a prompt that shares a long prefix with the last one but ends
        # differently cannot reuse it (the window's older entries are gone).
        flags = {
            "--model": self.model,
            "--alias": self.alias,
            "--host": "127.0.0.1",
            "--port": self.port,
            "--ctx-size": self.n_ctx,
            "--threads": self.threads,
            "--threads-batch": self.threads_batch,
            "--parallel": 1,
        }
        verbose = ["--verbose"] if self.verbose else []
        pairs = [str(part) for pair in flags.items() for part in pair]
        return [str(self.binary), *pairs, "--swa-full", "--no-webui", *verbose]

    @property
    def running(self) -> bool:
        """Whether it was started and has not exited (or been stopped) since."""
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """The server process's id while it runs."""
        return self._process.pid if self._process is not None else None

    def start(self) -> str:
        """Start the server and wait until it answers; stopped again if it does not."""
        self.port = _free_port()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._log_handle = self.log.open("wb")
        self._started, self._stopped = time.monotonic(), None
        self._process = subprocess.Popen(
            self.command(), stdout=self._log_handle, stderr=subprocess.STDOUT
        )
        try:
            self._wait_ready(self._process)
        except BaseException:
            self.stop()
            raise
        return self.base_url

    def _wait_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise LocalModelError(f"llama.cpp server exited at start; see {self.log}")
            if _stopping.is_set():
                raise KeyboardInterrupt  # `start` stops it; the run ends as stopped
            try:
                urllib.request.urlopen(f"{self.base_url}/models", timeout=2).close()
                return
            except OSError:
                time.sleep(0.25)
        raise LocalModelError(
            f"llama.cpp server not ready in {START_TIMEOUT_S:.0f} s; see {self.log}"
        )

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None
        if self._started is not None and self._stopped is None:
            self._stopped = time.monotonic()

    def account(self, body: bytes) -> None:
        """Add one answer's `timings` to the server's sums."""
        try:
            timings = json.loads(body).get("timings")
            values = {name: float(timings[name]) for name in TIMINGS}
        except (ValueError, AttributeError, KeyError, TypeError):
            return
        self._requests += 1
        for name, value in values.items():
            self._timings[name] += value

    def usage(self) -> ServerUsage | None:
        """Its timings' sums and wall time so far; None if it never started."""
        if self._started is None:
            return None
        up_s = (self._stopped or time.monotonic()) - self._started
        # The token counts are sums of whole numbers: pydantic takes them as the ints they are.
        return ServerUsage.model_validate(
            {"up_s": up_s, "requests": self._requests, **self._timings}
        )

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
