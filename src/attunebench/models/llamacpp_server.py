"""`local/NAME`: one of the local models (`local_models`), or a GGUF file of the user's own
(`options = { file, sha256 }`, `gguf_file`), served by llama.cpp's own `llama-server` for the run
(how it is started, paced, stopped and accounted: docs/running-models.md); the server
(`LlamaServer`) also serves the end-to-end tests and the benchmarks. The binary is built by
`make llama-server`, and found as ATTUNEBENCH_LLAMA_SERVER, in the environment's `bin`, or on
PATH."""

from __future__ import annotations

import itertools
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
from typing import IO, Any, Literal

from attunebench.models.base import ProviderError
from attunebench.models.gguf_file import GgufFile, gguf_file
from attunebench.models.local_models import GEMMA, LocalModel, LocalModelError, local_model
from attunebench.models.openai_compat import OpenAICompatProvider
from attunebench.models.registry import PROVIDERS
from attunebench.records import ServerUsage
from attunebench.userdirs import user_cache

SERVER_VARIABLE = "ATTUNEBENCH_LLAMA_SERVER"
START_TIMEOUT_S = 180.0  # loading a model from a cold disk on two busy cores
CTX_SIZE = 4096  # prompt and answer together: twice the 2,048 of a bare LlamaServer
NOT_STARTED = "http://127.0.0.1:0/v1"  # the base URL until the server has a port
_instances = itertools.count(1)  # a log per server, even for two of one model in a process


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
STOPPING = threading.Event()


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
            if STOPPING.is_set():
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


@PROVIDERS.register("local")
class LocalProvider(OpenAICompatProvider):
    """`openai/` against a llama-server of its own; see the module docstring."""

    slots = 1
    # llama-server continues a final assistant message: a chat model's choice question is
    # asked with "Answer: (" in its own turn. SmolLM2 135M put 0.46 of its first token's mass
    # on "(" when asked in the user's turn, 0.99 on the keys when the opening was its own.
    choice_prefill = True

    def __init__(
        self,
        model: str,
        *,
        file: str | None = None,
        sha256: str | None = None,
        answer: Literal["generate", "choice"] = "generate",
        chat: bool | None = None,
        json_mode: bool = False,
        json_schema: bool = False,
        threads: int | None = None,
        ctx_size: int = CTX_SIZE,
        timeout_s: float = 300.0,
    ) -> None:
        if sha256 is not None and file is None:
            raise LocalModelError(
                f"local/{model}: sha256 goes with file (the GGUF file it pins); the four "
                "pinned models carry their own"
            )
        local = local_model(model) if file is None else gguf_file(model, file, sha256)
        spec = f"local/{local.name}"
        if not local.chat and answer != "choice":
            raise LocalModelError(
                f"{spec} is a base model with no chat template: it answers in choice mode only "
                '(answer = "choice", as examples/models.toml sets)'
            )
        if not local.chat and chat:
            raise LocalModelError(f"{spec} has no chat template: chat = true does not apply")
        missing = server_missing()
        if missing is not None:
            raise LocalModelError(f"{spec}: {missing}")
        weights = local.path()  # verified against its SHA-256, or refused here
        self.local: LocalModel | GgufFile = local  # before the base's checks, which name `spec`
        super().__init__(
            local.name,
            base_url=NOT_STARTED,
            api_key="",  # its own server: no key, whatever OPENAI_API_KEY says
            json_mode=json_mode,
            json_schema=json_schema,
            chat=local.chat if chat is None else chat,
            timeout_s=timeout_s,
        )
        self._identity = local.identity
        # ATTUNEBENCH_LOG_DIR overrides; a log is kept only when its server failed (`aclose`).
        logs = user_cache("logs", "ATTUNEBENCH_LOG_DIR")
        log = logs / f"llama-server-{local.name}-{os.getpid()}-{next(_instances)}.log"
        self.server = LlamaServer(
            weights, log=log, alias=local.name, threads=threads, n_ctx=ctx_size
        )
        self._closed = False

    @property
    def spec(self) -> str:
        return f"local/{self.local.name}"

    def cache_identity(self) -> dict[str, Any]:
        # The verified weights, over the entry's; and how a choice question is put to it.
        return {"identity": self._identity, "choice": "prefilled"}

    @property
    def endpoint(self) -> str:
        return f"local:{self.local.name}:{id(self):x}"  # its own server, whatever the port

    def _serve(self) -> None:
        """Start the server unless it runs. Blocking, on purpose: a start handed to a thread
        could finish after an interrupt had closed the provider, and leave a server behind."""
        if self._closed:
            raise LocalModelError(f"{self.spec}: its server was stopped when the run closed")
        if self.server.pid is None:
            self.base_urls = [self.server.start()]

    async def check(self) -> None:
        self._serve()
        await super().check()

    async def _post(
        self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> bytes:
        # Every call `openai/` makes (generate, choice, pre-flight) comes through here.
        try:
            self._serve()
        except LocalModelError as error:
            raise ProviderError(str(error), retryable=False) from None
        answer = await super()._post(path, body, headers)
        self.server.account(answer)
        return answer

    def server_usage(self) -> ServerUsage | None:
        return self.server.usage()

    async def aclose(self) -> None:
        self._closed = True
        try:
            await super().aclose()
        finally:
            planned = self.server.running  # still up: stopped as planned, not failed
            self.server.stop()
            if planned:
                self.server.log.unlink(missing_ok=True)
