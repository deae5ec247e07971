"""Synthetic run directories with planted effects, for testing the analysis and timing it.

Not a benchmark result: the records are drawn at random so that tests can plant a known truth
(a model's accuracy per task, a between-conversation spread, an informed-context gain) and
check that the statistics find it. The records are what the engine writes (record format v2):
the items are the tasks' own (`Task.items` on synthetic conversations), the gold and prediction
are the tasks' typed models, and each score comes from the task's own `score`, `judged` or
`worst`, so every section of a report has something to show.

A model answers an item right with its planted accuracy for the task, shifted on the logit
scale by the conversation's difficulty (shared by every model) and, for the `informed`
variant, by `informed_gain`. The answers are written by the tasks' own answer forms from the
gold (`AnswerForm.from_gold`, as `sim/oracle` writes them) and read by the task's `parse`, so
no task is named here: what a wrong answer is (another label, the other reply, a rating drawn
uniformly) is the form's. A miss on a pair asked in both orders is, half the time, a pick by
position. A judged task's reply is scored by the proxy judge's planted verdicts.
Each model's draws come from its own stream (seed, model name, task), so adding a model to a
plan never changes another model's records.
"""

from __future__ import annotations

import dataclasses
import hashlib
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from attunebench import __version__, rundir
from attunebench.analysis.loading import Run, Runs
from attunebench.data.jsonl import write_conversations
from attunebench.data.schema import (
    Context,
    Conversation,
    Participant,
    Preference,
    Response,
    Source,
    State,
    Turn,
)
from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams
from attunebench.records import ItemRecord, ModelInfo, PromptInfo, RunInfo, Verdict
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Item, JudgedVerdict, Output, Query, Scored, Task, takes_option

EMOTIONS = ("anxiety", "sadness", "anger", "joy", "relief", "loneliness")
BEHAVIORS = ("question", "reflection", "reassurance", "suggestion", "information")
TOPICS = ("work", "family", "health")
JUDGE = "proxy/minilm"


@dataclass(frozen=True)
class Plan:
    """What to draw: each model's true chance of answering an item right, per task, and the
    design.

    `items` sets a task's items per conversation (default `items_per_conversation`; a task
    with fewer uses the first turns). `conversation_spread` is the standard deviation (logit
    scale) of a per-conversation difficulty shared by all models and tasks, so items of one
    conversation are correlated. `informed_gain` adds to the logit of the `informed` variant.
    """

    accuracy: Mapping[str, Mapping[str, float]]
    conversations: int = 40
    items_per_conversation: int = 5
    items: Mapping[str, int] = field(default_factory=dict)
    conversation_spread: float = 0.0
    variants: tuple[str, ...] = ("blind",)
    informed_gain: float = 0.0
    invalid_rate: float = 0.0
    failed_rate: float = 0.0
    judge_accuracy: float | None = None
    seed: int = 0
    sources: tuple[str, ...] = ("synthetic-a", "synthetic-b")
    kinds: Mapping[str, str] = field(default_factory=dict)

    def items_of(self, task: str) -> int:
        return self.items.get(task, self.items_per_conversation)

    @property
    def turns(self) -> int:
        return max([self.items_per_conversation, *self.items.values()])

    @property
    def context(self) -> str:
        return "both" if len(set(self.variants)) > 1 else self.variants[0]


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return float(np.log(p / (1 - p)))


def _turn(c: int, t: int, rng: np.random.Generator) -> Turn:
    feeling = EMOTIONS[(c + t) % len(EMOTIONS)]
    labels = (BEHAVIORS[t % 5], BEHAVIORS[(t + 2) % 5])
    padding = " really" * int(rng.integers(0, 8))  # lengths vary: the longer-reply reference
    return Turn(
        index=t,
        user=f"Message {t} of conversation {c}: <b>I feel {feeling}</b>",
        state=State(primary=feeling, emotions=(feeling,), intensity=float(1 + (c + t) % 5)),
        responses=(
            Response(id="r1", text=f"I hear you{padding}, turn {t}.", behaviors=labels),
            Response(id="r2", text=f"That sounds{' very' * int(rng.integers(0, 8))} hard."),
        ),
        preference=Preference(chosen="r1" if rng.random() < 0.5 else "r2"),
        feedback=float(rng.integers(1, 6)),
    )


def _gold_fields(plan: Plan) -> list[str]:
    """The data fields every task's gold is read from (`state` for `state.intensity`)."""
    tasks = [_task(name, plan) for name in load_tasks().names()]
    return sorted({field.split(".")[0] for task in tasks for field in task.gold_fields})


def conversations(plan: Plan) -> list[Conversation]:
    """The plan's conversations: every turn carries what each task needs (a self-report, two
    replies with the participant's pick, behavior labels on the first, a rating)."""
    rng = np.random.default_rng([plan.seed, 1])
    bands = [("18-29", "30-49", "50+")[i] for i in rng.integers(0, 3, plan.conversations)]
    provenance: dict[str, Any] = {name: "simulated" for name in _gold_fields(plan)}
    out = []
    for c in range(plan.conversations):
        name = plan.sources[c % len(plan.sources)]
        out.append(
            Conversation(
                id=f"c{c:04d}",
                source=Source(kind="simulated", name=name, provenance=provenance),
                participant=Participant(id=f"p{c // 2:04d}", traits={"age_band": bands[c // 2]}),
                taxonomy="attunebench-default",
                context=Context(topic=TOPICS[c % len(TOPICS)]),
                turns=tuple(_turn(c, t, rng) for t in range(plan.turns)),
            )
        )
    return out


def _task(name: str, plan: Plan) -> Task[Any, Any]:
    """The task with the options the plan draws for: its context, a judge's pairwise verdicts
    (the proxy judge's), a judge audited on the participant's informed context."""
    factory = load_tasks().get(name)
    wanted = {
        "context": plan.context,
        "judge_mode": "pairwise",
        "participant_context": "informed",
        "seed": plan.seed,
    }
    return factory(**{k: v for k, v in wanted.items() if takes_option(factory, k)})


def drawable(task: Task[Any, Any]) -> bool:
    """Whether records of `task` can be drawn: its answer forms write answers from the gold,
    or its answer is a reply that the proxy judge's verdicts score."""
    return bool(task.judge_forms) or all(form.gold_answers for form in task.subject_forms)


@dataclass(frozen=True)
class _Asked:
    """An item with its gold as JSON, its queries and its answers parsed so far: the same for
    every model, so rendered and parsed once per item and answer rather than once per record
    (most of a large plan's drawing time)."""

    item: Item[Any]
    gold: dict[str, Any]
    queries: Sequence[Query]
    parsed: dict[tuple[tuple[str, str | None], ...], Frozen] = field(default_factory=dict)

    def parse(self, task: Task[Any, Any], outputs: Mapping[str, Output]) -> Frozen:
        key = tuple((name, output.text) for name, output in outputs.items())
        if key not in self.parsed:
            self.parsed[key] = task.parse(self.item, outputs)
        return self.parsed[key]


def _asked(task: Task[Any, Any], items: Iterable[Item[Any]]) -> list[_Asked]:
    return [_Asked(i, i.gold.model_dump(mode="json"), task.queries(i, "generate")) for i in items]


def _outputs(
    asked: _Asked, right: bool | float, used: frozenset[str], rng: np.random.Generator
) -> dict[str, Output]:
    """Each query's answer, written by its answer form from the gold (right or wrong as
    `_rights` says, query by query); where the form writes none, a reply the judge scores."""
    item, gold, queries = asked.item, asked.gold, asked.queries
    out = {}
    for query, correct in zip(queries, _rights(right, len(queries), rng), strict=True):
        hint, text = query.hint, "A synthetic reply." if correct else "A worse reply."
        if hint is not None and hint.form is not None and hint.form.gold_answers:
            # A wrong label is one the plan's data uses, not any of the taxonomy's.
            labels = tuple(label for label in hint.labels if label in used) or hint.labels
            told = dataclasses.replace(
                hint,
                item_key=f"{item.key}|{query.key}",
                task=item.task,
                gold=gold,
                labels=labels,
            )
            text = hint.form.from_gold(told, gold, correct, rng)
        out[query.key] = Output(text=text)
    return out


def _rights(right: bool | float, queries: int, rng: np.random.Generator) -> list[bool]:
    """Which of an item's queries are answered right. A float is each query's own chance (a
    judge on both orders of a pair). Otherwise all of them, or for a miss the first wrong and
    each later one wrong or (half the time) right: a pair asked in both orders then misses
    half the time by the other reply in both orders and half the time by the reply in one
    position (position, not content)."""
    if not isinstance(right, bool):
        return [bool(rng.random() < right) for _ in range(queries)]
    if right:
        return [True] * queries
    return [False] + [bool(rng.random() < 0.5) for _ in range(queries - 1)]


def _verdicts(right: bool) -> list[JudgedVerdict]:
    """The proxy judge's four pairwise verdicts: the model's reply wins all or none."""
    out = []
    for comparison in ("vs_chosen", "vs_rejected"):
        for order, mine in (("model-first", "A"), ("reference-first", "B")):
            winner = mine if right else ("B" if mine == "A" else "A")
            query = Query(
                f"{comparison}/{order}@{JUDGE}",
                [],
                PromptInfo(id="pairwise", version="1"),
                GenerateParams(),
                role="judge",
                model=JUDGE,
            )
            verdict = Verdict(
                judge=JUDGE,
                prompt_id="pairwise",
                prompt_version="1",
                mode="proxy",
                order=order,
                rendered_prompt=f"<compare {comparison}>",
                raw_output=f"similarity favours {winner}",
                parsed={"winner": winner},
            )
            out.append(JudgedVerdict(query, verdict))
    return out


def _record(
    task: Task[Any, Any],
    asked: _Asked,
    model: str,
    status: str,
    right: bool | float,
    used: frozenset[str],
    rng: np.random.Generator,
) -> ItemRecord:
    item = asked.item
    base: dict[str, Any] = {
        "task": item.task,
        "model": model,
        "conversation_id": item.conversation.id,
        "turn_index": item.turn_index,
        "item_id": item.item_id,
        "variant": item.variant,
        "gold": asked.gold,
        "calls": 1,
    }
    if status == "failed":
        return ItemRecord.model_construct(
            **base, status="failed", error="synthetic outage: HTTP 503"
        )
    if status == "invalid":
        scored = task.worst(item, None)
        return _scored(base, "invalid", None, scored, raw="{oops", error="not JSON")
    prediction = asked.parse(task, _outputs(asked, right, used, rng))
    if task.judge_forms:
        verdicts = _verdicts(bool(right))
        scored = task.judged(item, prediction, verdicts)
        base["verdicts"] = tuple(v.verdict for v in verdicts)
    else:
        scored = task.score(item, prediction)
    return _scored(base, "ok", prediction, scored, raw="{}")


def _scored(
    base: dict[str, Any],
    status: str,
    prediction: Frozen | None,
    scored: Scored,
    raw: str,
    error: str | None = None,
) -> ItemRecord:
    return ItemRecord(
        **base,
        status=status,
        prediction=None if prediction is None else prediction.model_dump(mode="json"),
        score=scored.score,
        scores=dict(scored.values),
        flags=scored.flags,
        raw_output=raw,
        error=error,
    )


def _stream(plan: Plan, model: str, task: str) -> np.random.Generator:
    return np.random.default_rng(
        [plan.seed, 2, zlib.crc32(model.encode()), zlib.crc32(task.encode())]
    )


def _items(
    plan: Plan, declaration: Task[Any, Any], found: Sequence[Conversation]
) -> list[Item[Any]]:
    count = plan.items_of(declaration.name)
    return [item for item in declaration.items(found) if item.turn_index < count]


def records(plan: Plan, found: Sequence[Conversation] | None = None) -> list[ItemRecord]:
    """Every record of the plan: each model on each of its tasks, then the judge audits."""
    found = conversations(plan) if found is None else found
    difficulty = np.random.default_rng([plan.seed, 3]).normal(
        0.0, plan.conversation_spread, len(found)
    )
    index = {c.id: i for i, c in enumerate(found)}
    names = sorted({task for per_task in plan.accuracy.values() for task in per_task})
    declarations = {name: _task(name, plan) for name in names}
    undrawn = sorted(name for name, task in declarations.items() if not drawable(task))
    if undrawn:
        raise ValueError(f"synthetic records for {', '.join(undrawn)} are not drawn")
    items = {
        name: _asked(declarations[name], _items(plan, declarations[name], found)) for name in names
    }
    used = {name: _strings(asked.gold for asked in items[name]) for name in names}
    out = []
    for model, per_task in plan.accuracy.items():
        for name, accuracy in per_task.items():
            rng = _stream(plan, model, name)
            for asked in items[name]:
                item = asked.item
                gain = plan.informed_gain if item.variant == "informed" else 0.0
                logit = _logit(accuracy) + gain + difficulty[index[item.conversation.id]]
                draw, right = rng.random(), bool(rng.random() < 1 / (1 + np.exp(-logit)))
                status = "ok"
                if draw < plan.failed_rate:
                    status = "failed"
                elif draw < plan.failed_rate + plan.invalid_rate:
                    status = "invalid"
                task = declarations[name]
                out.append(_record(task, asked, model, status, right, used[name], rng))
    if plan.judge_accuracy is not None:
        for audit in _audits(plan):
            rng = _stream(plan, JUDGE, audit.name)
            audited = _asked(audit, _items(plan, audit, found))
            seen = _strings(asked.gold for asked in audited)
            out.extend(
                _record(audit, asked, JUDGE, "ok", plan.judge_accuracy, seen, rng)
                for asked in audited
            )
    return out


def _strings(found: object) -> frozenset[str]:
    """Every string in JSON values (the labels a task's golds use)."""
    if isinstance(found, str):
        return frozenset({found})
    if isinstance(found, Mapping):
        found = found.values()
    if isinstance(found, Iterable):
        return frozenset().union(*(_strings(part) for part in found))
    return frozenset()


def _audits(plan: Plan) -> list[Task[Any, Any]]:
    """The tasks whose "model" is a judge and whose answers can be drawn: the judge audited
    on the participants' pairs."""
    made = (_task(name, plan) for name in load_tasks().names())
    return [task for task in made if task.evaluates == "judges" and drawable(task)]


def run_info(
    plan: Plan, found: Sequence[Conversation], chosen: Sequence[ItemRecord], dataset_sha256: str
) -> RunInfo:
    models = sorted({r.model for r in chosen} - {JUDGE})
    return RunInfo(
        package_version=__version__,
        dataset="dataset.jsonl",
        dataset_sha256=dataset_sha256,
        dataset_ids=sorted({c.source.name for c in found}),
        provenance={c.source.name: dict(c.source.provenance) for c in found},
        tasks=sorted({r.task for r in chosen}),
        models=[ModelInfo(spec=m, kind=plan.kinds.get(m, "model")) for m in models],
        judges=[ModelInfo(spec=JUDGE, role="judge", kind="proxy")],
        seed=plan.seed,
        planned_items=len(chosen),
        started_at="2025-01-01T00:00:00Z",
        finished_at="2025-01-01T01:00:00Z",
        complete=True,
    )


def _chosen(
    plan: Plan, models: Sequence[str] | None
) -> tuple[list[Conversation], list[ItemRecord]]:
    found = conversations(plan)
    drawn = records(plan, found)
    return found, [r for r in drawn if models is None or r.model in models or r.model == JUDGE]


def runs(plan: Plan, models: Sequence[str] | None = None) -> Runs:
    """The plan's runs in memory, as `load_runs` would read them from `write_run`'s directory."""
    found, chosen = _chosen(plan, models)
    info = run_info(plan, found, chosen, "0" * 64)
    answered = sum(r.status != "failed" for r in chosen)
    run = Run(Path("synthetic"), info, None, answered)
    return Runs((run,), tuple(chosen), {c.id: c for c in found})


def write_run(
    directory: str | Path,
    plan: Plan,
    models: Sequence[str] | None = None,
    *,
    conversations_file: bool = True,
) -> Path:
    """Write dataset.jsonl, run.json, records.jsonl and (unless told not to, as a run written
    before the run directory held them) conversations.jsonl for the plan (optionally only some
    models)."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    found, chosen = _chosen(plan, models)
    dataset = root / "dataset.jsonl"
    write_conversations(dataset, found)
    if conversations_file:
        write_conversations(root / rundir.CONVERSATIONS_FILE, found)
    with (root / rundir.RECORDS_FILE).open("w", encoding="utf-8") as handle:
        handle.writelines(r.model_dump_json() + "\n" for r in chosen)
    sha = hashlib.sha256(dataset.read_bytes()).hexdigest()
    rundir.write_json(root / rundir.RUN_FILE, run_info(plan, found, chosen, sha))
    return root
