"""`local/NAME`: one of the local models (`local_models`), or a GGUF file of the user's own
(`options = { file, sha256 }`, `gguf_file`), served by llama.cpp's `llama-server` for the run.

Made, it verifies the weights against their SHA-256 before any call; on first use it starts
the server on a free 127.0.0.1 port, and `aclose` (the engine's `finally`) stops it by its PID.
The calls are `openai/`'s, pointed at that server. Its cache identity is the weights, never the
port; the server takes one call at a time (`slots`), which keeps a conversation's prompts back
to back for its prefix cache, and what it reports goes into ledger.json's `servers`."""

from __future__ import annotations

import itertools
import os
from typing import Any, Literal

from attunebench.models.base import ProviderError
from attunebench.models.gguf_file import GgufFile, gguf_file
from attunebench.models.llamacpp_server import LlamaServer, server_missing
from attunebench.models.local_models import LocalModel, LocalModelError, local_model
from attunebench.models.openai_compat import OpenAICompatProvider
from attunebench.models.registry import PROVIDERS
from attunebench.records import ServerUsage
from attunebench.userdirs import user_cache

CTX_SIZE = 4096  # prompt and answer together: twice the 2,048 of a bare LlamaServer
NOT_STARTED = "http://127.0.0.1:0/v1"  # the base URL until the server has a port
_instances = itertools.count(1)  # a log per server, even for two of one model in a process


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
