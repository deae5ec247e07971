"""How much of a choice-mode run does llama.cpp's prefix cache save, and where does time go?

Gemma 3 270M behind llama.cpp's server (verbose, so it logs each request's prefix-cache hit
and its prefill and generation timings). The choice questions of the first N ESConv test
conversations (MultiESC; the sample when the shared data is absent), for emotion, preference,
rating and outcome, are sent one at a time:

1. in conversation order, as the engine schedules them (task by task, turn by turn);
2. after a server restart (an empty cache), in a shuffled order;
3. the same items' questions in generate mode (JSON answers, 48 tokens at most), for items
   per second in choice against generate mode.

Prompt tokens sent are what the requests held; prompt tokens evaluated are what the server
had to compute after reusing the cached prefix. The last line is JSON with
`prompt_tokens_sent`, `prompt_tokens_evaluated`, `ordered_s` and `shuffled_s`, plus the rest.

    .venv/bin/python benchmarks/llm_prefix.py [--conversations 2] [--threads N] [--quick]

`--quick`: the first 3 choice questions and 1 generate question of one conversation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

from attunebench.data.importers import ESConvImporter
from attunebench.data.jsonl import read_conversations
from attunebench.data.locations import corpus_dir
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation
from attunebench.models.base import GenerateParams
from attunebench.models.llamacpp_server import LlamaServer
from attunebench.models.local_models import GEMMA
from attunebench.models.openai_compat import OpenAICompatProvider
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Query
from testkit import prerequisites

TASKS = ("emotion", "preference", "rating", "outcome")
PERF = re.compile(r"(prompt eval|eval) time =\s+([\d.]+) ms /\s+(\d+) (?:tokens|runs)")
GENERATE = GenerateParams(temperature=0.0, max_tokens=48, seed=0)
QUICK_CHOICE, QUICK_GENERATE = 3, 1


def conversations(count: int) -> list[Conversation]:
    source = corpus_dir("esconv")
    if not source.is_dir():
        return read_conversations(sample_path())[:count]
    found = []
    for conversation in ESConvImporter(variant="multiesc", split="test").read(source, Counter()):
        found.append(conversation)
        if len(found) == count:
            break
    return found


def queries(found: list[Conversation], mode: str) -> list[Query]:
    """Every question of the tasks' items, in the engine's order within a conversation."""
    registry = load_tasks()
    out = []
    for conversation in found:
        for name in TASKS:
            task = registry.get(name)()
            for item in sorted(task.items([conversation]), key=lambda i: i.turn_index):
                out += task.queries(item, "choice" if mode == "choice" else "generate")
    return out


async def ask(provider: OpenAICompatProvider, asked: list[Query], mode: str) -> tuple[float, int]:
    sent = 0
    started = time.perf_counter()
    for query in asked:
        if mode == "choice" and query.choice is not None:
            answer = await provider.choose(list(query.choice.messages), query.choice.keys, GENERATE)
            sent += answer.input_tokens
        else:
            output = await provider.generate(list(query.messages), GENERATE)
            sent += output.input_tokens
    await provider.aclose()
    return time.perf_counter() - started, sent


def server_figures(log: Path) -> dict[str, float]:
    """Prompt tokens the server evaluated (after its cache), and its prefill and generation
    speeds, from llama.cpp's per-request timings in the log."""
    text = log.read_text(errors="replace")
    totals: dict[str, list[float]] = {"prompt eval": [0.0, 0.0], "eval": [0.0, 0.0]}
    for kind, ms, count in PERF.findall(text):
        totals[kind][0] += float(ms)
        totals[kind][1] += float(count)
    prefill, generation = totals["prompt eval"], totals["eval"]
    return {
        "prompt_eval_tokens": prefill[1],
        "prefill_tokens_per_s": round(prefill[1] / (prefill[0] / 1000), 1) if prefill[0] else 0.0,
        "generation_tokens_per_s": (
            round(generation[1] / (generation[0] / 1000), 1) if generation[0] else 0.0
        ),
    }


def served(
    model: Path, folder: Path, name: str, threads: int | None, asked: list[Query], mode: str
) -> tuple[float, int, dict[str, float]]:
    log = folder / f"{name}.log"
    with LlamaServer(model, log=log, threads=threads, verbose=True) as server:
        provider = OpenAICompatProvider(
            GEMMA.name, base_url=server.base_url, chat=False, timeout_s=600
        )
        seconds, sent = asyncio.run(ask(provider, asked, mode))
    return seconds, sent, server_figures(log)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument(
        "--generate-questions",
        type=int,
        default=12,
        help="generate-mode questions timed (each may write 48 tokens)",
    )
    parser.add_argument("--quick", action="store_true", help="3 choice questions, 1 generate")
    args = parser.parse_args()
    if args.quick:
        args.conversations, args.generate_questions = 1, QUICK_GENERATE
    prerequisites.llama_server()
    model = prerequisites.local_model(GEMMA)
    found = conversations(args.conversations)
    ordered = queries(found, "choice")[: QUICK_CHOICE if args.quick else None]
    shuffled = random.Random(0).sample(ordered, len(ordered))
    generated = queries(found, "generate")[: args.generate_questions]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        ordered_s, sent, first = served(model, folder, "ordered", args.threads, ordered, "choice")
        shuffled_s, _, second = served(model, folder, "shuffled", args.threads, shuffled, "choice")
        generate_s, _, third = served(
            model, folder, "generate", args.threads, generated, "generate"
        )
    evaluated = int(first["prompt_eval_tokens"])
    figures = {
        "conversations": len(found),
        "choice_questions": len(ordered),
        "prompt_tokens_sent": sent,
        "prompt_tokens_evaluated": evaluated,
        "cached_share": round(1 - evaluated / sent, 3) if sent else None,
        "shuffled_prompt_tokens_evaluated": int(second["prompt_eval_tokens"]),
        "ordered_s": round(ordered_s, 2),
        "shuffled_s": round(shuffled_s, 2),
        "seconds_per_choice_question": round(ordered_s / max(len(ordered), 1), 3),
        "choice_questions_per_s": round(len(ordered) / ordered_s, 3),
        "generate_questions_per_s": round(len(generated) / generate_s, 3),
        "prefill_tokens_per_s": first["prefill_tokens_per_s"],
        "generation_tokens_per_s": third["generation_tokens_per_s"],
        "threads": args.threads,
    }
    print(f"{sent} prompt tokens sent, {evaluated} evaluated in conversation order")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
