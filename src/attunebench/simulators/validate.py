"""`attunebench simulators validate`: a simulated user, checked against the people it stands in
for, written to `DIR/simulators.json`.

Nothing is written before the inputs are all checked (the runs to rank, the data); then the
simulator is asked everything, its answers written beside the figures (`people.jsonl`, the
replay run in `replay/`, `realism.jsonl`), and every figure computed on one set of resampled
conversations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attunebench import __version__
from attunebench.analysis.comparisons.rollouts import simulator_rollouts
from attunebench.analysis.loading import Runs, load_runs
from attunebench.analysis.resampled import Resampler
from attunebench.analysis.schema import NoiseFloor
from attunebench.data.jsonl import sha256_file, write_conversations
from attunebench.data.schema import Conversation
from attunebench.data.validate import load_validated
from attunebench.models.base import Provider
from attunebench.models.modelsfile import ModelEntry
from attunebench.rundir import RUN_FILE, RunDirError, rewrite_records, write_json
from attunebench.simulators.authenticity import realism_auroc
from attunebench.simulators.continuation import continue_turn, labelled_turns
from attunebench.simulators.grading import grade_turn, graded_turns
from attunebench.simulators.leaks import leaks
from attunebench.simulators.prompting import TEMPLATES, prompts_digest
from attunebench.simulators.ranking import ranking
from attunebench.simulators.realism import emotion_by_third, intensity_change, negative_feedback
from attunebench.simulators.records import Continued, Graded, Sought
from attunebench.simulators.replay import (
    REPLAY_RUN,
    Replayed,
    read_replay,
    replay_items,
    replay_tasks,
    rollout_seeds,
)
from attunebench.simulators.schema import (
    SIMULATORS_FILE,
    DataFile,
    Realism,
    ReplayFigure,
    Resampling,
    SimulatorPin,
    SimulatorsReport,
)
from attunebench.simulators.seeker import DATA_SUPPORTER, opening_turn, seek
from attunebench.simulators.session import SAMPLED, Plan, open_session
from attunebench.tasks.base import PlanError, prompts_of

REALISM_FILE = "realism.jsonl"
PEOPLE_FILE = "people.jsonl"  # the conversations validated, as the replay's run reads them


class SimulatorError(ValueError):
    """The validation cannot run as asked; the message says why in one line."""


@dataclass(frozen=True)
class Simulated:
    """Everything the simulator was asked, answered."""

    replayed: list[Replayed]
    continued: list[Continued]
    sought: list[Sought]
    graded: list[Graded]
    identity: dict[str, Any]


def refuse_run_models(simulator: ModelEntry, runs: Runs | None) -> None:
    """A simulator that is one of the models it would rank is refused."""
    if runs is None:
        return
    ours = {simulator.name, simulator.spec.partition("?")[0]}
    for run in runs.runs:
        for model in run.info.models:
            if ours & {model.name, model.spec.partition("?")[0]}:
                raise SimulatorError(
                    f"--simulator {simulator.name} is {model.name}, a model of --runs {run.path}: "
                    "a simulator must differ from every model it ranks"
                )


def load_data(
    paths: Sequence[Path], limit: int | None
) -> tuple[list[Conversation], list[DataFile]]:
    """The first `limit` conversations of each file, validated; ids unique across files."""
    conversations: list[Conversation] = []
    files = []
    seen: dict[str, Path] = {}
    for path in paths:
        found = load_validated(path)[:limit]
        for conversation in found:
            if conversation.id in seen:
                raise SimulatorError(
                    f"{path}: conversation {conversation.id} is also in {seen[conversation.id]}"
                )
            seen[conversation.id] = path
        conversations += found
        sources = sorted({c.source.name for c in found})
        files.append(
            DataFile(
                path=str(path), sha256=sha256_file(path), conversations=len(found), sources=sources
            )
        )
    return conversations, files


async def simulate(
    plan: Plan,
    conversations: Sequence[Conversation],
    runs: Runs | None,
    providers: Mapping[str, Provider],
) -> Simulated:
    """The simulator asked everything: the replay (an ordinary run), then the realism questions."""
    plan.out.mkdir(parents=True, exist_ok=True)
    people = plan.out / PEOPLE_FILE
    write_conversations(people, conversations)
    turns = plan.per_conversation
    tasks = [t for t in replay_tasks(plan.seed, runs) if replay_items(t, conversations, turns)]
    async with open_session(plan, providers) as session:
        if tasks:
            try:
                await session.replay(tasks, people, plan.out / REPLAY_RUN, turns)
            except (RunDirError, PlanError) as error:
                raise SimulatorError(str(error)) from None
        continued = await session.each_turn(
            "continuing", conversations, labelled_turns, continue_turn
        )
        sought = await session.each_turn("seeking", conversations, opening_turn, seek)
        # a grade is asked of real messages alone: a choice answer is the same in every rollout
        graded = await session.each_turn(
            "grading", conversations, graded_turns, grade_turn, generated=False
        )
        identity = session.engine.models[plan.simulator.name].identity
    replayed = read_replay(plan.out / REPLAY_RUN, tasks, conversations, turns) if tasks else []
    return Simulated(replayed, continued, sought, graded, dict(identity))


def pin(plan: Plan, simulated: Simulated) -> SimulatorPin:
    """What decided the simulator's answers."""
    tasks = [prompt for r in simulated.replayed for prompt in prompts_of(r.task)]
    kept = plan.simulator.params.model_dump(mode="json", exclude_unset=True, exclude=set(SAMPLED))
    sampling = {**kept, **plan.sampling.model_dump(mode="json", exclude={"seeds"})}
    return SimulatorPin(
        model=plan.simulator.name,
        spec=plan.simulator.spec,
        identity=simulated.identity,
        answer=plan.simulator.answer,
        prompt_digest=prompts_digest(tasks),
        prompts=sorted({*(t.info for t in TEMPLATES), *tasks}, key=lambda p: p.id),
        sampling=sampling,
        seeds=list(plan.sampling.seeds),
        supporter=plan.supporter.name if plan.supporter else DATA_SUPPORTER,
        exchanges=plan.exchanges,
        turns_per_conversation=plan.per_conversation,
    )


def replay_figures(
    folder: Path, resampler: Resampler
) -> tuple[dict[str, ReplayFigure], dict[str, NoiseFloor]]:
    """The replay run's figures, as the report reads rollouts, and each task's noise floor."""
    if not (folder / RUN_FILE).exists():
        return {}, {}
    runs = load_runs([folder])
    found = simulator_rollouts(runs, rollout_seeds(runs), resampler)
    shown = {task: ReplayFigure(**figure.model_dump()) for task, figure in found.figures.items()}
    return shown, {f"replay.{task}": floor for task, floor in found.noise_floor.items()}


def figures(
    plan: Plan,
    simulated: Simulated,
    conversations: Sequence[Conversation],
    runs: Runs | None,
    files: list[DataFile],
) -> SimulatorsReport:
    """Every figure, on one set of resampled conversations."""
    resampler = Resampler.over([c.id for c in conversations], plan.resamples, plan.seed)
    replay_shown, noise = replay_figures(plan.out / REPLAY_RUN, resampler)
    by_third, noise["realism.emotion_by_third"] = emotion_by_third(simulated.continued, resampler)
    supporter = plan.supporter.name if plan.supporter else DATA_SUPPORTER
    change, noise["realism.intensity_change"] = intensity_change(
        simulated.sought, resampler, supporter, plan.exchanges
    )
    feedback, noise["realism.negative_feedback_share"] = negative_feedback(
        simulated.graded, resampler
    )
    messages = [c.written for c in simulated.continued] + [
        m for s in simulated.sought for m in s.messages
    ]
    return SimulatorsReport(
        package_version=__version__,
        simulator=pin(plan, simulated),
        data=files,
        replay=replay_shown,
        realism=Realism(
            auroc=realism_auroc(messages, resampler),
            emotion_by_third=by_third,
            intensity_change=change,
            negative_feedback_share=feedback,
        ),
        ranking=ranking(simulated.replayed, runs, resampler, plan.include),
        noise_floor=noise,
        leaks=leaks(messages, conversations, TEMPLATES),
        resampling=Resampling(
            seed=plan.seed, resamples=plan.resamples, confidence=resampler.bootstrap.confidence
        ),
    )


async def validate(plan: Plan, providers: Mapping[str, Provider] | None = None) -> SimulatorsReport:
    """The whole validation (see the module docstring); `providers` (by model name) replace
    the ones the plan's entries would make, for tests."""
    runs = load_runs(list(plan.runs), allow_mixed_datasets=True) if plan.runs else None
    refuse_run_models(plan.simulator, runs)
    conversations, files = load_data(plan.data, plan.limit)
    if not conversations:
        raise SimulatorError("the data holds no conversation")
    simulated = await simulate(plan, conversations, runs, providers or {})
    rewrite_records(
        plan.out / REALISM_FILE, [*simulated.continued, *simulated.sought, *simulated.graded]
    )
    report = figures(plan, simulated, conversations, runs, files)
    write_json(plan.out / SIMULATORS_FILE, report)
    return report
