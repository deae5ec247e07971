"""One choice question's time on each local model, and whether its choices vary.

Each model (`local_models`, `--models a,b`; all four by default) is made as `local/NAME` with
`--threads` (2) and asked the emotion task's label question (16 options, A to P) of the
sample's first `--items` (10) emotion items, one at a time, with llama.cpp's prefix cache off
(`cache_prompt = false`): every question reads its whole prompt, as a first question would.
Per model: the mean seconds per question (wall, as the engine times a call), the server's own
prompt tokens per second, the letters it chose (its most probable key) and how many items'
self-reported primary emotion that letter names. A model that reads nothing picks one letter
for every item.

    .venv/bin/python benchmarks/local_models.py [--models smollm2-135m-instruct] [--items 10]
        [--threads 2] [--quick]

`--quick`: SmolLM2 alone, 2 items. The last line is JSON: `models` (per model: `params`,
`seconds_per_question`, `prompt_tokens`, `prompt_tokens_per_s`, `letters`, `distinct`,
`primary_named`), `items`, `threads`, `load` (the 1-minute load average before and after).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections import Counter
from typing import Any

from attunebench.data.jsonl import read_conversations
from attunebench.data.sample import sample_path
from attunebench.models.base import GenerateParams
from attunebench.models.llamacpp_server import LocalProvider
from attunebench.models.local_models import LOCAL_MODELS, SMOLLM2, LocalModel
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Item
from testkit import prerequisites

# Greedy and seeded, and the whole prompt read every time (llama-server's own field).
PARAMS = GenerateParams(temperature=0.0, max_tokens=1, seed=0, extra={"cache_prompt": False})


def emotion_items(count: int) -> list[Item[Any]]:
    task = load_tasks().get("emotion")()
    found = []
    for conversation in read_conversations(sample_path()):
        found += sorted(task.items([conversation]), key=lambda item: item.turn_index)
    return found[:count]


async def ask(model: LocalModel, items: list[Item[Any]], threads: int) -> dict[str, Any]:
    task = load_tasks().get("emotion")()
    provider = LocalProvider(model.name, answer="choice", threads=threads)
    letters: Counter[str] = Counter()
    named = 0
    seconds = 0.0
    try:
        await provider.check()  # starts the server: its load time is not a question's
        for item in items:
            choice = task.queries(item, "choice")[0].choice
            assert choice is not None
            started = time.perf_counter()
            output = await provider.choose(list(choice.messages), choice.keys, PARAMS)
            seconds += time.perf_counter() - started
            letter = max(output.probabilities, key=lambda key: output.probabilities[key])
            letters[letter] += 1
            named += dict(zip(choice.keys, choice.labels, strict=True))[letter] == item.gold.primary
        usage = provider.server_usage()
    finally:
        await provider.aclose()
    assert usage is not None
    return {
        "params": model.params,
        "seconds_per_question": round(seconds / len(items), 3),
        "prompt_tokens": round(usage.prompt_n / usage.requests),
        "prompt_tokens_per_s": round(usage.prompt_n / (usage.prompt_ms / 1000), 1),
        "letters": dict(sorted(letters.items())),
        "distinct": len(letters),
        "primary_named": named,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(LOCAL_MODELS))
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="SmolLM2 alone, 2 items")
    args = parser.parse_args()
    names = [SMOLLM2.name] if args.quick else args.models.split(",")
    prerequisites.llama_server()
    for name in names:
        prerequisites.local_model(LOCAL_MODELS[name])
    items = emotion_items(2 if args.quick else args.items)
    load_before = os.getloadavg()[0]
    figures = {}
    for name in names:
        figures[name] = asyncio.run(ask(LOCAL_MODELS[name], items, args.threads))
        print(name, figures[name])
    load = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    print(
        json.dumps({"models": figures, "items": len(items), "threads": args.threads, "load": load})
    )


if __name__ == "__main__":
    main()
