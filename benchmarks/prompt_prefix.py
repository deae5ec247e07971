"""How much of each prompt can a server's prefix cache serve from the prompt before it?

The engine sends a conversation's items task by task and turn by turn (see
`engine.scheduler`), so the prompt a server sees next is usually the previous one of the same
task and conversation with a little added. For every task on the sample data (by default
context both, so blind and informed items interleave as the engine sends them), this prints
the mean share of a prompt that its predecessor already had: the common prefix of the two
prompts, as serialised messages, over the later prompt's length, per task and prompt (a task's
subject and judge prompts, and the two preference prompts, are counted apart). The last line
is JSON.

    .venv/bin/python benchmarks/prompt_prefix.py [--context blind|informed|both]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
from collections import defaultdict
from dataclasses import dataclass, field

from attunebench.data.jsonl import read_conversations
from attunebench.data.sample import sample_path
from attunebench.models.base import GenerateParams, Message
from attunebench.models.hints import TaskHint
from attunebench.models.mock import default_answer
from attunebench.records import PromptInfo
from attunebench.tasks import TASKS
from attunebench.tasks.base import CallResult, CallRole, Item
from attunebench.tasks.judging import rendered

JUDGE = "mock/judge"
SUBJECT = "mock/subject"


@dataclass
class RecordingCaller:
    """Answers every call as the mock provider would and keeps the prompts, in call order."""

    prompts: defaultdict[tuple[str, str, str], list[str]] = field(
        default_factory=lambda: defaultdict(list)
    )

    async def call(
        self,
        model: str,
        messages: list[Message],
        *,
        prompt: PromptInfo,
        item: Item,
        role: CallRole = "subject",
        params: GenerateParams | None = None,
        hint: TaskHint | None = None,
    ) -> CallResult:
        self.prompts[item.task, prompt.id, item.conversation.id].append(rendered(messages))
        return CallResult(text=default_answer(hint))


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of two strings."""
    pairs = enumerate(zip(a, b, strict=False))
    return next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))


def shared_share(earlier: str, later: str) -> float:
    return common_prefix(earlier, later) / len(later)


async def measure(context: str) -> dict[str, float]:
    conversations = read_conversations(sample_path())
    caller = RecordingCaller()
    for name in TASKS.names():
        options = {} if name == "judge_audit" else {"context": context}
        task = TASKS.get(name)(**options)
        items = sorted(task.items(conversations), key=lambda i: i.turn_index)  # stable
        for item in items:
            await task.evaluate(item, SUBJECT, caller, [JUDGE])
    shares: dict[str, list[float]] = defaultdict(list)
    for (task_name, prompt_id, _), prompts in caller.prompts.items():
        shares[f"{task_name}/{prompt_id}"] += [
            shared_share(a, b) for a, b in itertools.pairwise(prompts)
        ]
    return {label: round(sum(v) / len(v), 4) for label, v in sorted(shares.items()) if v}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--context", choices=("blind", "informed", "both"), default="both")
    figures = asyncio.run(measure(parser.parse_args().context))
    for label, share in figures.items():
        print(f"{label:<36} mean shared-prefix share {share:.1%}")
    print(json.dumps({"shared_prefix_share": figures}))


if __name__ == "__main__":
    main()
