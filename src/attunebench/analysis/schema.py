"""The `summary.json` format: every number a report shows, with its interval and provenance.

A number that cannot be computed is `null` with a `reason`, never NaN. The report renders from
this model alone, so `summary.json` is the complete, versioned record of an analysis.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

SUMMARY_FORMAT: Final = "attunebench-summary/v1"

ModelKind = Literal["model", "baseline", "mock", "proxy"]


class Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Notice(Strict):
    """A warning: something the reader must know to trust (or distrust) a number."""

    kind: str
    message: str
    task: str | None = None
    model: str | None = None


class Estimate(Strict):
    """A point estimate with its percentile interval; `value` null means `reason` says why."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    reason: str | None = None


class ScoreRow(Strict):
    model: str
    model_kind: ModelKind
    task: str
    variant: str
    metric: str
    headline: bool = Field(description="The task's primary metric on its headline variant.")
    value: float | None
    ci_low: float | None
    ci_high: float | None
    reason: str | None = None
    n: int = Field(description="Items scored (ok + invalid).")
    n_conversations: int
    n_invalid: int
    n_failed: int
    judges: list[str] = Field(default_factory=list, description="Judges behind this number.")


class Correlation(Strict):
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    reason: str | None = None


class TaskPair(Strict):
    task_a: str
    task_b: str
    models: list[str]
    kendall_tau_b: Correlation
    spearman: Correlation
    p_holm: float | None = Field(description="Kendall p-value, Holm-adjusted over the pairs.")
    verdict: str


class RankCorrelation(Strict):
    tasks: list[str]
    models: list[str]
    permutations: int
    reason: str | None = None
    kendall_tau_b: list[list[Correlation]]
    spearman: list[list[Correlation]]
    pairs: list[TaskPair]


class Discriminability(Strict):
    task: str
    variant: str
    metric: str
    models: list[str]
    separability: float | None
    spread: float | None
    mean_ci_width: float | None
    spread_over_noise: float | None
    rank: int | None = Field(description="1 = the task that best separates models.")
    reason: str | None = None


class Difference(Strict):
    """A paired difference between two conditions on the same items."""

    model: str
    task: str
    a: str
    b: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_conversations: int
    verdict: str
    reason: str | None = None


class JudgeAgreement(Strict):
    """A judge against the participants' own picks (`judge.audit` statistics)."""

    judge: str
    judge_kind: ModelKind
    n: int
    n_failed: int
    n_conversations: int
    derived_share: float | None
    accuracy: Estimate
    agreement: Estimate
    kappa: Estimate
    flip_rate: Estimate
    longer_win_share: Estimate
    participant_longer_share: Estimate
    length_balanced_agreement: Estimate
    length_matched_agreement: Estimate


class GroupScore(Strict):
    model: str
    task: str
    group: str
    level: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_conversations: int
    p_value: float | None = None
    p_holm: float | None = None
    reason: str | None = None


class Confusion(Strict):
    model: str
    task: str
    labels: list[str]
    predicted: list[str] = Field(description="Columns: the labels, plus 'invalid'.")
    counts: list[list[int]]


class LabelF1(Strict):
    model: str
    task: str
    label: str
    f1: float | None
    precision: float | None
    recall: float | None
    support: int


class ItemAnswer(Strict):
    model: str
    status: str
    score: float | None
    prediction: str
    reasoning: str | None = None


class WorstItem(Strict):
    task: str
    variant: str
    conversation_id: str
    turn_index: int
    item_id: str
    mean_score: float
    text: str | None
    gold: str
    answers: list[ItemAnswer]


class Diagnostics(Strict):
    confusion: list[Confusion]
    label_f1: list[LabelF1]
    turn_position: list[GroupScore]
    intensity: list[GroupScore]
    subgroups: list[GroupScore]
    worst_items: list[WorstItem]


class TaskInfo(Strict):
    name: str
    headline_variant: str
    variants: list[str]
    n_items: int
    gold_levels: dict[str, int] = Field(default_factory=dict)
    derived_share: float | None = None
    judges: list[str] = Field(default_factory=list)


class ModelEntry(Strict):
    name: str = Field(description="What records and tables call it.")
    spec: str
    kind: ModelKind
    role: Literal["subject", "judge"]


class RunEntry(Strict):
    path: str
    dataset: str
    dataset_sha256: str
    package_version: str
    seed: int
    started_at: str
    finished_at: str | None
    complete: bool


class Settings(Strict):
    seed: int
    resamples: int
    corpus_resamples: int
    permutations: int
    cluster: Literal["conversation", "participant"]
    confidence: float
    min_subgroup_conversations: int


class Provenance(Strict):
    package_version: str
    dataset_sha256: list[str]
    runs: list[RunEntry]
    models: list[ModelEntry]
    judges: list[ModelEntry]


class Summary(Strict):
    format: Literal["attunebench-summary/v1"] = SUMMARY_FORMAT
    provenance: Provenance
    settings: Settings
    tasks: list[TaskInfo]
    scores: list[ScoreRow]
    rank_correlation: RankCorrelation
    discriminability: list[Discriminability]
    context_modes: list[Difference]
    judge_agreement: list[JudgeAgreement]
    diagnostics: Diagnostics
    warnings: list[Notice]
