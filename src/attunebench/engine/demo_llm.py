"""`make demo-llm`: AttuneBench end to end against a real LLM on this machine.

Assembles and verifies Gemma 3 270M, serves it with llama.cpp's OpenAI-compatible server on
127.0.0.1, runs the sample conversations through the `openai/` provider (the same path as any
hosted or vLLM model), stops the server, and says where the run directory is. The model is a
small base model that follows instructions poorly: the demo shows the machinery, not quality.

    python -m attunebench.engine.demo_llm [--out DIR] [--limit N] [--max-tokens N]
"""

from __future__ import annotations

import argparse
import asyncio
from importlib import resources
from pathlib import Path

from rich.console import Console

from attunebench.engine.runner import RunConfig, run
from attunebench.models.llamacpp_server import LlamaServer, gemma_gguf, models_toml
from attunebench.models.modelsfile import load_models_file

console = Console()
SAMPLE = resources.files("attunebench.data") / "sample" / "sample.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description="AttuneBench against a local Gemma 3 270M.")
    parser.add_argument("--out", type=Path, default=Path("demo-out") / "llm")
    parser.add_argument("--limit", type=int, default=2, help="conversations from the sample")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument(
        "--json-mode",
        action="store_true",
        help="grammar-constrained JSON answers (slower per token on a CPU)",
    )
    args = parser.parse_args()

    model = gemma_gguf()
    console.print(f"model: {model} (SHA-256 verified)")
    args.out.mkdir(parents=True, exist_ok=True)
    with LlamaServer(model, log=args.out / "llama-server.log") as server:
        console.print(f"llama.cpp server: {server.base_url}")
        models_file = args.out / "models.toml"
        toml = models_toml(server.base_url, max_tokens=args.max_tokens, json_mode=args.json_mode)
        models_file.write_text(toml)
        gemma = load_models_file(models_file)["gemma"]
        config = RunConfig(
            data=Path(str(SAMPLE)),
            out=args.out / "run",
            models=(gemma,),
            judges=(gemma,),
            tasks=("emotion", "behavior", "preference", "response"),
            limit=args.limit,
            cache_path=args.out / "cache.sqlite",
        )
        result = asyncio.run(run(config))
    t = result.totals
    console.print(
        f"{result.recorded}/{result.planned} items recorded ({result.failed} failed); "
        f"{t.calls} calls, {t.cache_hits} cache hits, {t.input_tokens}+{t.output_tokens} tokens"
    )
    console.print(f"run directory: {result.rundir}")


if __name__ == "__main__":
    main()
