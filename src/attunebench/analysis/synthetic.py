"""Synthetic run directories with planted effects, for testing the analysis and timing it.

Not a benchmark result: the records are drawn at random so that tests can plant a known truth
(a model's accuracy per task, a between-conversation spread, an informed-context gain) and
check that the statistics find it. Records follow the tasks' conventions (`score`, `scores`,
`prediction`, `gold`, `meta`), so every section of a report has something to show.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from attunebench import __version__
from attunebench.data.jsonl import conversation_line
from attunebench.data.schema import Conversation, Participant, Source, State, Turn
from attunebench.records import ItemRecord, ModelInfo, RunInfo, Verdict

EMOTIONS = ("anxiety", "sadness", "anger", "joy", "relief", "loneliness")
BEHAVIORS = ("question", "reflection", "reassurance", "suggestion", "information")
JUDGE = "proxy/minilm"
TASKS = ("emotion", "behavior", "preference", "response")


@dataclass(frozen=True)
class Plan:
    """What to draw: each model's true per-item success probability per task, and the design.

    `conversation_spread` is the standard deviation (logit scale) of a per-conversation
    difficulty shared by all models, so items of one conversation are correlated.
    `informed_gain` adds to the logit of the `informed` variant, when it is planned.
    """

    accuracy: Mapping[str, Mapping[str, float]]
    conversations: int = 40
    items_per_conversation: int = 5
    conversation_spread: float = 0.0
    variants: tuple[str, ...] = ("blind",)
    informed_gain: float = 0.0
    invalid_rate: float = 0.0
    failed_rate: float = 0.0
    judge_accuracy: float | None = None
    seed: int = 0
    sources: tuple[str, ...] = ("synthetic-a", "synthetic-b")
    kinds: Mapping[str, str] = field(default_factory=dict)


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return float(np.log(p / (1 - p)))


def conversations(plan: Plan) -> list[Conversation]:
    rng = np.random.default_rng([plan.seed, 1])
    bands = [("18-29", "30-49", "50+")[i] for i in rng.integers(0, 3, plan.conversations)]
    out = []
    for c in range(plan.conversations):
        turns = tuple(
            Turn(
                index=t,
                user=f"Message {t} of conversation {c}: <b>I feel {EMOTIONS[(c + t) % 6]}</b>",
                state=State(primary=EMOTIONS[(c + t) % 6], intensity=float(1 + (c + t) % 5)),
            )
            for t in range(plan.items_per_conversation)
        )
        out.append(
            Conversation(
                id=f"c{c:04d}",
                source=Source(kind="simulated", name=plan.sources[c % len(plan.sources)]),
                participant=Participant(id=f"p{c // 2:04d}", traits={"age_band": bands[c // 2]}),
                taxonomy="attunebench-default",
                turns=turns,
            )
        )
    return out


def _item(task: str, success: bool, turn: int, rng: np.random.Generator) -> dict[str, Any]:
    """prediction, gold, score and scores for one item of a task."""
    if task == "emotion":
        gold = EMOTIONS[turn % len(EMOTIONS)]
        guess = gold if success else EMOTIONS[(turn + 1 + int(rng.integers(5))) % 6]
        level = float(1 + turn % 5)
        said = float(min(5, max(1, level + (0 if success else rng.integers(-2, 3)))))
        return dict(
            prediction={"primary": guess, "emotions": [guess], "intensity": said},
            gold={"primary": gold, "emotions": [gold], "intensity": level},
            score=float(success),
            scores={
                "primary_correct": float(success),
                "jaccard": float(success),
                "intensity_abs_error": abs(said - level),
            },
            meta={"gold_level": "turn"},
        )
    if task == "behavior":
        gold_set = [BEHAVIORS[turn % 5], BEHAVIORS[(turn + 2) % 5]]
        predicted = gold_set if success else [BEHAVIORS[(turn + 1) % 5]]
        hit = len(set(gold_set) & set(predicted))
        f1 = 2 * hit / (len(gold_set) + len(predicted))
        return dict(
            prediction={"behaviors": predicted},
            gold={"behaviors": gold_set},
            score=f1,
            scores={},
            meta={},
        )
    if task == "preference":
        other = bool(rng.random() < 0.5)
        ab, ba = ("r1", "r1") if success else (("r2", "r1") if other else ("r1", "r1"))
        correct_ab, correct_ba = float(ab == "r1"), float(ba == "r1")
        return dict(
            prediction={"ab": ab, "ba": ba},
            gold={"chosen": "r1", "tie": False},
            score=(correct_ab + correct_ba) / 2,
            scores={
                "correct_ab": correct_ab,
                "correct_ba": correct_ba,
                "consistent": float(ab == ba),
            },
            meta={"derived": turn % 4 == 0, "first": "r1", "second": "r2"},
        )
    win = float(success)
    return dict(
        prediction={"reply": "A reply."},
        gold={"chosen": "r1", "rejected": "r2"},
        score=win,
        scores={"win_vs_chosen": win, "win_vs_rejected": 1.0, f"win_vs_chosen[{JUDGE}]": win},
        meta={"judges": [JUDGE]},
    )


def _verdicts(task: str, success: bool) -> tuple[Verdict, ...]:
    if task != "response":
        return ()
    return (
        Verdict(
            judge=JUDGE,
            prompt_id="pairwise",
            prompt_version="1",
            mode="proxy",
            order="model-first",
            rendered_prompt="<compare>",
            raw_output=f"similarity favours {'the model' if success else 'the reference'}",
            parsed={"winner": "A" if success else "B"},
        ),
    )


def _record(
    task: str,
    model: str,
    cid: str,
    turn: int,
    variant: str,
    success: bool,
    status: str,
    rng: np.random.Generator,
) -> ItemRecord:
    fields = _item(task, success, turn, rng)
    record = ItemRecord(
        task=task,
        model=model,
        conversation_id=cid,
        turn_index=turn,
        item_id=f"t{turn}",
        variant=variant,
        gold=fields["gold"],
        meta=fields["meta"],
        status="ok",
        prediction=fields["prediction"],
        score=fields["score"],
        scores=fields["scores"],
        verdicts=_verdicts(task, success),
        raw_output="{}",
    )
    if status == "failed":
        return record.model_copy(
            update={
                "status": "failed",
                "prediction": None,
                "score": None,
                "scores": {},
                "verdicts": (),
                "raw_output": None,
                "error": "synthetic outage",
            }
        )
    if status == "invalid":
        zeros = {key: 0.0 for key in fields["scores"] if key != "intensity_abs_error"}
        return record.model_copy(
            update={
                "status": "invalid",
                "prediction": None,
                "score": 0.0,
                "scores": zeros,
                "verdicts": (),
                "raw_output": "{oops",
            }
        )
    return record


def _audit_record(cid: str, turn: int, accuracy: float, rng: np.random.Generator) -> ItemRecord:
    chosen = "r1" if rng.random() < 0.5 else "r2"
    other = "r2" if chosen == "r1" else "r1"
    picks = [chosen if rng.random() < accuracy else other for _ in range(2)]
    len_a, len_b = (int(v) for v in rng.integers(20, 60, 2))
    return ItemRecord(
        task="judge_audit",
        model=JUDGE,
        conversation_id=cid,
        turn_index=turn,
        item_id=f"t{turn}",
        status="ok",
        prediction={"ab": picks[0], "ba": picks[1]},
        gold={"chosen": chosen, "tie": False},
        score=float(picks == [chosen, chosen]),
        scores={
            "agree_ab": float(picks[0] == chosen),
            "agree_ba": float(picks[1] == chosen),
            "consistent": float(picks[0] == picks[1]),
        },
        meta={
            "first": "r1",
            "second": "r2",
            "len_a": len_a,
            "len_b": len_b,
            "longer": "equal" if len_a == len_b else ("A" if len_a > len_b else "B"),
            "derived": False,
        },
    )


def records(plan: Plan) -> list[ItemRecord]:
    rng = np.random.default_rng([plan.seed, 2])
    difficulty = rng.normal(0.0, plan.conversation_spread, plan.conversations)
    out = []
    for model, per_task in plan.accuracy.items():
        for task, accuracy in per_task.items():
            for variant in plan.variants:
                gain = plan.informed_gain if variant == "informed" else 0.0
                for c in range(plan.conversations):
                    logit = _logit(accuracy) + gain + difficulty[c]
                    p = 1 / (1 + np.exp(-logit))
                    for turn in range(plan.items_per_conversation):
                        draw = rng.random()
                        status = (
                            "failed"
                            if draw < plan.failed_rate
                            else (
                                "invalid" if draw < plan.failed_rate + plan.invalid_rate else "ok"
                            )
                        )
                        out.append(
                            _record(
                                task,
                                model,
                                f"c{c:04d}",
                                turn,
                                variant,
                                bool(rng.random() < p),
                                status,
                                rng,
                            )
                        )
    if plan.judge_accuracy is not None:
        for c in range(plan.conversations):
            for t in range(plan.items_per_conversation):
                out.append(_audit_record(f"c{c:04d}", t, plan.judge_accuracy, rng))
    return out


def write_run(directory: str | Path, plan: Plan, models: Sequence[str] | None = None) -> Path:
    """Write dataset.jsonl, run.json and records.jsonl for the plan (optionally some models)."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    dataset = root / "dataset.jsonl"
    dataset.write_text("".join(conversation_line(c) + "\n" for c in conversations(plan)))
    chosen = [r for r in records(plan) if models is None or r.model in models or r.model == JUDGE]
    (root / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in chosen))
    info = RunInfo(
        package_version=__version__,
        dataset="dataset.jsonl",
        dataset_sha256=hashlib.sha256(dataset.read_bytes()).hexdigest(),
        tasks=sorted({r.task for r in chosen}),
        models=[
            ModelInfo(spec=m, kind=plan.kinds.get(m, "model"))
            for m in sorted({r.model for r in chosen} - {JUDGE})
        ],
        judges=[ModelInfo(spec=JUDGE, role="judge", kind="proxy")],
        seed=plan.seed,
        started_at="2025-01-01T00:00:00Z",
        complete=True,
    )
    (root / "run.json").write_text(info.model_dump_json(indent=2))
    return root
