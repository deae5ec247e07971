"""Write the shipped suite manifests (src/attunebench/suite/manifests/) from the corpora.

Run once per suite version, by whoever releases it; a run of a suite never calls this. Each
part's evaluated conversations are drawn at random (seeded) among those carrying its main
gold; Topical-Chat contributes one side per chat, so no two evaluated conversations share
their text, and its train split comes from other chats. The mini suite is the first
conversations of each part of the full one, with the same train split.

    python scripts/suite_manifests.py     # the corpora: ATTUNEBENCH_DATA_DIR, ... (data.locations)
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from attunebench.data.jsonl import write_conversations
from attunebench.data.locations import data_dir
from attunebench.data.schema import Conversation
from attunebench.rundir import sha256_file
from attunebench.suite.build import import_part, item_keys
from attunebench.suite.manifest import CorpusPart, Manifest
from attunebench.tasks import make_tasks

MANIFESTS = Path(__file__).resolve().parents[1] / "src" / "attunebench" / "suite" / "manifests"
NAME, VERSION, SELECTION_SEED, RUN_SEED = "open-v1", "2", 2026, 0
TASKS = ("emotion", "rating", "outcome", "preference")
TRAIN = 60  # per part, for the fitted baselines (knn embeds them all: keep it small)
MINI = "open-v1-mini"


@dataclass(frozen=True)
class Plan:
    part: CorpusPart  # conversations and train empty until drawn
    require: str  # a conversation is eligible when this task has an item in it
    size: int
    mini: int


Draw = tuple[str, int, int]  # the task a conversation must have an item of, size, mini size


@dataclass(frozen=True)
class _Corpus:
    """The fields every part drawn from one corpus folder shares (its importer is named after
    the folder)."""

    corpus: str
    license: str
    gold: str
    non_commercial: bool = False

    def plan(self, part: str, options: dict[str, str], files: list[str], draw: Draw) -> Plan:
        drawn = CorpusPart(
            name=part,
            importer=self.corpus,
            options=options,
            files=dict.fromkeys(files, ""),
            conversations=[],
            **asdict(self),
        )
        return Plan(drawn, *draw)


def _plans() -> list[Plan]:
    esconv = _Corpus(
        "esconv",
        "CC BY-NC 4.0 (academic research use only)",
        "the seeker: feedback on the supporter's replies (rating, derived preference pairs), "
        "emotion type (emotion, conversation-level), post-chat intensity and survey (outcome)",
        non_commercial=True,
    )
    convai1 = _Corpus(
        "convai1",
        "Apache-2.0",
        "the volunteer talking to a chatbot: thumbs on its messages (rating, derived "
        "preference pairs), 1-5 quality, breadth, engagement (outcome)",
    )
    topical_chat = _Corpus(
        "topical_chat",
        "CDLA-Sharing-1.0",
        "the writer: own emotion label of each message (emotion); the receiver: rating of "
        "each message (rating, derived preference pairs); each worker: rating of the "
        "conversation (outcome)",
    )
    multiesc = ["valid.jsonl", "test.jsonl", "multiesc/valid.jsonl", "multiesc/test.jsonl"]
    topical = [f"{s}.json" for s in ("valid_freq", "valid_rare", "test_freq", "test_rare")]
    failed, chats = ["FailedESConv.json"], ["data_1501534800.tar.gz"]
    return [
        esconv.plan(
            "esconv-multiesc", {"variant": "multiesc", "split": "all"}, multiesc, ("rating", 40, 12)
        ),
        esconv.plan(
            "esconv-failed", {"variant": "failed", "split": "all"}, failed, ("rating", 20, 6)
        ),
        convai1.plan(
            "convai1-human-bot", {"variant": "human-bot", "split": "all"}, chats, ("rating", 60, 12)
        ),
        topical_chat.plan(
            "topical-chat", {"split": "all", "perspective": "both"}, topical, ("emotion", 40, 12)
        ),
    ]


def _chat(conversation_id: str) -> str:
    """Topical-Chat's two sides of one chat share this; other corpora: the id itself."""
    return conversation_id.rsplit("-agent_", 1)[0]


def _draw(
    plan: Plan, pool: dict[str, Conversation], rng: random.Random
) -> tuple[list[str], list[str]]:
    """(evaluated ids, train ids): one side per chat, chats never shared between the two."""
    require = make_tasks([plan.require], {}, RUN_SEED)[0]
    chats: dict[str, list[str]] = {}
    for cid, conversation in pool.items():
        if next(iter(require.items([conversation])), None) is not None:
            chats.setdefault(_chat(cid), []).append(cid)
    order = sorted(chats)
    rng.shuffle(order)
    picked = [rng.choice(sorted(chats[chat])) for chat in order[: plan.size + TRAIN]]
    return picked[: plan.size], picked[plan.size :]


def _digest(conversations: Sequence[Conversation], path: Path) -> str:
    write_conversations(path, conversations)
    return sha256_file(path)


def _manifest(
    name: str,
    description: str,
    parts: list[CorpusPart],
    pools: dict[str, dict[str, Conversation]],
    scratch: Path,
) -> Manifest:
    evaluated = [pools[p.name][i] for p in parts for i in p.conversations]
    train = [pools[p.name][i] for p in parts for i in p.train]
    tasks = make_tasks(list(TASKS), {}, RUN_SEED)
    options: dict[str, dict[str, Any]] = {task.name: dict(task.options) for task in tasks}
    draft = Manifest(
        name=name,
        version=VERSION,
        description=description,
        seed=RUN_SEED,
        selection_seed=SELECTION_SEED,
        tasks=options,
        parts=parts,
        dataset_sha256=_digest(evaluated, scratch / "evaluated.jsonl"),
        train_sha256=_digest(train, scratch / "train.jsonl"),
        items={},
    )
    return draft.model_copy(update={"items": item_keys(draft, evaluated)})


def make(root: Path, out: Path, scratch: Path) -> list[Manifest]:
    rng = random.Random(SELECTION_SEED)
    parts, minis, pools = [], [], {}
    for plan in _plans():
        folder = root / plan.part.corpus
        files = {name: sha256_file(folder / name) for name in plan.part.files}
        pools[plan.part.name] = pool = import_part(plan.part, folder)
        evaluated, train = _draw(plan, pool, rng)
        part = plan.part.model_copy(
            update={"files": files, "conversations": evaluated, "train": train}
        )
        parts.append(part)
        minis.append(part.model_copy(update={"conversations": evaluated[: plan.mini]}))
    full = _manifest(
        NAME,
        "The open suite: first-person gold from ESConv (MultiESC and "
        "FailedESConv feedback), ConvAI1 human-chatbot chats and Topical-Chat.",
        parts,
        pools,
        scratch,
    )
    mini = _manifest(
        MINI,
        f"The first conversations of each part of {NAME}, for demos: at "
        "least 10 conversations per task.",
        minis,
        pools,
        scratch,
    )
    for manifest in (full, mini):
        text = json.dumps(manifest.model_dump(mode="json"), indent=1, ensure_ascii=False)
        (out / f"{manifest.name}.json").write_text(text + "\n", encoding="utf-8")
    return [full, mini]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        for manifest in make(data_dir(), MANIFESTS, Path(scratch)):
            counts = {task: len(keys) for task, keys in manifest.items.items()}
            print(manifest.name, counts)  # noqa: T201 (a release tool's output)
