"""How much of each prompt can a server's prefix cache serve from the prompt before it?

The engine sends a conversation's items task by task and turn by turn (see
`engine.scheduler`), so the prompt a server sees next is usually the previous one of the same
task and conversation with a little added. For every task on the sample data (by default
context both, so blind and informed items interleave as the engine sends them), this prints
the mean share of a prompt that its predecessor already had: the common prefix of the two
prompts, as serialised messages, over the later prompt's length, per task and prompt (a task's
subject and judge prompts, and the two preference prompts, are counted apart). The last line
is JSON.

    .venv/bin/python benchmarks/prompt_prefix.py [--context blind|informed|both] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import defaultdict
from collections.abc import Sequence

from attunebench.data.jsonl import read_conversations
from attunebench.data.sample import sample_path
from attunebench.models.mock import default_answer
from attunebench.tasks import load_tasks
from attunebench.tasks.base import InvalidAnswer, Output, Query, takes_option
from attunebench.tasks.helpers.judging import rendered

JUDGE = "mock/judge"
QUICK_CONVERSATIONS = 3
Prompts = defaultdict[tuple[str, str, str], list[str]]


def answered(queries: Sequence[Query]) -> dict[str, Output]:
    """Each query answered as the mock provider would."""
    return {q.key: Output(text=default_answer(q.hint)) for q in queries}


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of two strings."""
    pairs = enumerate(zip(a, b, strict=False))
    return next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))


def shared_share(earlier: str, later: str) -> float:
    return common_prefix(earlier, later) / len(later)


def measure(context: str, conversations: int | None = None) -> dict[str, float]:
    """Every task's mean shared-prefix share per prompt, on the sample (its first
    `conversations`, where given)."""
    sample = read_conversations(sample_path())[:conversations]
    prompts: Prompts = defaultdict(list)
    tasks = load_tasks()
    for name in tasks.names():
        factory = tasks.get(name)
        task = factory(context=context) if takes_option(factory, "context") else factory()
        items = sorted(task.items(sample), key=lambda i: i.turn_index)  # stable
        for item in items:
            queries = task.queries(item, "generate")
            try:
                prediction = task.parse(item, answered(queries))
            except InvalidAnswer:
                prediction = None
            if prediction is not None:
                queries += task.judge_queries(item, prediction, [JUDGE])
            for query in queries:
                prompts[name, query.prompt.id, item.conversation.id].append(rendered(query))
    shares: dict[str, list[float]] = defaultdict(list)
    for (task_name, prompt_id, _), sent in prompts.items():
        shares[f"{task_name}/{prompt_id}"] += [
            shared_share(a, b) for a, b in itertools.pairwise(sent)
        ]
    return {label: round(sum(v) / len(v), 4) for label, v in sorted(shares.items()) if v}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--context", choices=("blind", "informed", "both"), default="both")
    parser.add_argument("--quick", action="store_true", help="the sample's first 3 conversations")
    args = parser.parse_args()
    figures = measure(args.context, QUICK_CONVERSATIONS if args.quick else None)
    for label, share in figures.items():
        print(f"{label:<36} mean shared-prefix share {share:.1%}")
    print(json.dumps({"shared_prefix_share": figures}))


if __name__ == "__main__":
    main()
