"""`simulators.json` (`attunebench-simulators/v1`): how far a simulated user stands in for the
people it simulates. Every figure is a value with its cluster-bootstrap interval, or null with
the reason (never NaN): the analysis's `Estimate`, which every figure here is or holds;
docs/simulators.md describes each key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

from pydantic import Field, ValidationError

from attunebench.analysis.schema import (
    Estimate,
    NoiseFloor,
    NoisyDifference,
    RolloutFigure,
)
from attunebench.frozen import Frozen, first_problem
from attunebench.records import PromptInfo

SIMULATORS_FORMAT: Final = "attunebench-simulators/v1"
SIMULATORS_FILE: Final = "simulators.json"


class ReplayFigure(RolloutFigure):
    """One task replayed: the simulated person's answers scored against the person's own, with
    the task's headline metric, over every rollout (`analysis.comparisons.rollouts`)."""

    gold: str = "first-person"


class LabelShares(Frozen):
    """One third of the conversations: the share of each self-label, people and simulator."""

    third: int
    n_people: int
    n_simulator: int
    people: dict[str, float]
    simulator: dict[str, float]
    distance: Estimate = Field(description="Total variation distance of the two distributions.")


class EmotionByThird(NoisyDifference):
    """Continuing real conversations as the writer: the simulator's own labels against the
    writers' at the same turns. `value`: its negative share minus the people's."""

    thirds: list[LabelShares] = Field(default_factory=list)
    negative_people: Estimate = Field(default_factory=Estimate)
    negative_simulator: Estimate = Field(default_factory=Estimate)
    n_turns: int = 0
    n_conversations: int = 0


class IntensityChange(NoisyDifference):
    """Playing the seeker: the intensity after the conversation minus before, the simulator's
    against the real seekers'. `value`: its mean change minus theirs."""

    people: Estimate = Field(default_factory=Estimate)
    simulator: Estimate = Field(default_factory=Estimate)
    people_distribution: dict[str, int] = Field(default_factory=dict)
    simulator_distribution: dict[str, int] = Field(default_factory=dict)
    supporter: str = ""
    exchanges: int = 0
    n_conversations: int = 0
    note: str = ""


class NegativeFeedback(NoisyDifference):
    """Grading the real other side's messages: the share graded below the scale's middle, the
    simulator's minus the people's."""

    people: Estimate = Field(default_factory=Estimate)
    simulator: Estimate = Field(default_factory=Estimate)
    n_grades: int = 0
    n_conversations: int = 0
    by_source: dict[str, dict[str, float | int | None]] = Field(default_factory=dict)


class Auroc(Estimate):
    """How well a classifier fitted out of sample tells the simulator's messages from the
    people's at the same points; 0.5: indistinguishable."""

    n_simulated: int = 0
    n_real: int = 0
    n_conversations: int = 0
    classifier: str = ""


class Realism(Frozen):
    auroc: Auroc
    emotion_by_third: EmotionByThird
    intensity_change: IntensityChange
    negative_feedback_share: NegativeFeedback


class ModelPlace(Frozen):
    """A model's headline on one task, with the people's gold and with the simulator's."""

    model: str
    kind: str
    people: float | None
    simulator: float | None


class TaskRanking(Frozen):
    spearman: Estimate
    models: list[ModelPlace]
    n_items: int
    n_unanswered: int = Field(description="Items left out: the simulator gave no usable answer.")


class Flip(Frozen):
    """Two models the people's gold orders one way and the simulator's the other."""

    task: str
    people_higher: str
    simulator_higher: str


class Ranking(Frozen):
    """The models of `--runs`, ranked with the people's gold and with the simulator's, on the
    same items. `spearman`: the mean over tasks of each task's Spearman's rho."""

    spearman: Estimate
    flips: list[Flip] = Field(default_factory=list)
    by_task: dict[str, TaskRanking] = Field(default_factory=dict)
    runs: list[str] = Field(default_factory=list)


class Flagged(Frozen):
    conversation_id: str
    turn_index: int
    rollout: int
    why: Literal["instructions", "supporter-role"]
    text: str


class Leaks(Frozen):
    """Simulated messages that repeat their instructions, or read as the other side's."""

    messages: int = 0
    instructions: int = 0
    supporter_role: int = 0
    expected_false_share: float = Field(
        default=0.0, description="The share of the people's own messages the role test flags."
    )
    examples: list[Flagged] = Field(default_factory=list)
    reason: str | None = None


class SimulatorPin(Frozen):
    """Everything that decides what the simulator said."""

    model: str
    spec: str
    identity: dict[str, object]
    answer: Literal["generate", "choice"]
    prompt_digest: str
    prompts: list[PromptInfo]
    sampling: dict[str, object]
    seeds: list[int]
    supporter: str
    exchanges: int
    turns_per_conversation: int


class DataFile(Frozen):
    path: str
    sha256: str
    conversations: int
    sources: list[str]


class Resampling(Frozen):
    seed: int
    resamples: int
    confidence: float
    cluster: Literal["conversation"] = "conversation"


class SimulatorsReport(Frozen):
    format: Literal["attunebench-simulators/v1"] = SIMULATORS_FORMAT
    package_version: str
    simulator: SimulatorPin
    data: list[DataFile]
    replay: dict[str, ReplayFigure]
    realism: Realism
    ranking: Ranking
    noise_floor: dict[str, NoiseFloor]
    leaks: Leaks
    resampling: Resampling
    warnings: list[str] = Field(default_factory=list)


class SimulatorsFileError(ValueError):
    """A simulators.json that cannot be read: the message names the file and the field."""


def read_simulators(folder: Path) -> SimulatorsReport:
    """The validation a folder holds (`simulators.json`)."""
    path = folder / SIMULATORS_FILE
    try:
        return SimulatorsReport.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as error:
        where, problem = first_problem(error, "(the file)")
        raise SimulatorsFileError(f"{path}: {where}: {problem}") from None
