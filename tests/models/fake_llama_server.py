"""A stand-in for llama.cpp's `llama-server` binary, run as one by the `local/` tests: it takes
the same command line, answers /v1/models, /v1/chat/completions and /v1/completions on
127.0.0.1 with a fixed answer (the keys' logprobs for a choice call) and fixed `timings`, and
appends its PID to $FAKE_LLAMA_PIDS when it starts. $FAKE_LLAMA_EXIT makes it exit at once
with that status, as a server that cannot load its model does; $FAKE_LLAMA_DELAY (seconds)
makes each answer take that long; $FAKE_LLAMA_LOAD (seconds) makes it that long before it
listens, as a large model takes to load."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TIMINGS = {"prompt_n": 30, "cache_n": 70, "prompt_ms": 300.0, "predicted_n": 1, "predicted_ms": 5.0}
KEYS = "ABCDEFGHIJ123456789"


def answer(body: dict[str, Any], chat: bool) -> dict[str, Any]:
    usage = {"prompt_tokens": 100, "completion_tokens": 1}
    if chat and body.get("logprobs"):
        top = [{"token": key, "logprob": -1.0 - i / 10} for i, key in enumerate(KEYS)]
        choice = {"message": {"role": "assistant", "content": "A"}}
        choice["logprobs"] = {"content": [{"token": "A", "top_logprobs": top}]}
    elif chat:
        choice = {"message": {"role": "assistant", "content": '{"ok": true}'}}
    else:
        top_completion = {key: -1.0 - i / 10 for i, key in enumerate(KEYS)}
        choice = {"text": "A", "logprobs": {"top_logprobs": [top_completion]}}
    choice |= {"index": 0, "finish_reason": "stop"}
    return {"id": "fake", "model": "fake", "choices": [choice], "usage": usage, "timings": TIMINGS}


class Handler(BaseHTTPRequestHandler):
    def _send(self, value: dict[str, Any]) -> None:
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send({"data": [{"id": "fake"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(float(os.environ.get("FAKE_LLAMA_DELAY", "0")))
        self._send(answer(body, chat=self.path.endswith("/chat/completions")))

    def log_message(self, format: str, *args: Any) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    known, _ = parser.parse_known_args()
    if os.environ.get("FAKE_LLAMA_EXIT"):
        sys.exit(int(os.environ["FAKE_LLAMA_EXIT"]))
    with open(os.environ["FAKE_LLAMA_PIDS"], "a", encoding="utf-8") as pids:
        pids.write(f"{os.getpid()}\n")
    time.sleep(float(os.environ.get("FAKE_LLAMA_LOAD", "0")))
    ThreadingHTTPServer(("127.0.0.1", known.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
