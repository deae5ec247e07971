"""The `summary.json` format: every number a report shows, with its interval and provenance.

A number that cannot be computed is `null` with a `reason`, never NaN. The report renders from
this model alone, so `summary.json` is the complete, versioned record of an analysis.
"""

from __future__ import annotations

from typing import Any, Final, Literal, Self

from pydantic import Field

from attunebench.frozen import Frozen
from attunebench.kinds import ModelKind
from attunebench.records import ItemRecord, SuiteInfo
from attunebench.stats import none_if_nan

SUMMARY_FORMAT: Final = "attunebench-summary/v2"

Verdict = Literal["agree", "distinct", "cannot tell"]


class Notice(Frozen):
    """A warning: something the reader must know to trust (or distrust) a number."""

    kind: str
    message: str
    task: str | None = None
    model: str | None = None


class Estimate(Frozen):
    """A point estimate with its percentile interval; `value` null means `reason` says why. Rows
    about something inherit these four fields, so they sit in the JSON beside the others."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    reason: str | None = None

    @classmethod
    def of(
        cls, value: float, low: float, high: float, why: str | None = None, few: str | None = None
    ) -> Self:
        """A computed value and interval, NaN read as null (summary.json holds no NaN), `why` its
        reason; `few` (too few conversations for an interval) drops the interval, the reason."""
        point = none_if_nan(value)
        if point is not None and few is not None:
            return cls(value=point, reason=few)
        return cls(value=point, ci_low=none_if_nan(low), ci_high=none_if_nan(high), reason=why)

    def side(self, zero: float = 0.0) -> int | None:
        """+1 or -1 where the interval lies wholly above or below `zero`, 0 where it covers it,
        None where there is none."""
        if self.ci_low is None or self.ci_high is None:
            return None
        return 1 if self.ci_low > zero else -1 if self.ci_high < zero else 0


class ScoreRow(Estimate):
    model: str
    model_kind: ModelKind
    task: str
    variant: str
    metric: str
    headline: bool = Field(description="The task's primary metric on its headline variant.")
    n: int = Field(description="Items scored (ok + invalid).")
    n_conversations: int
    n_invalid: int
    n_failed: int
    n_judge_failed: int = Field(
        default=0, description="Scored items whose judge call failed (a loss)."
    )
    judges: list[str] = Field(default_factory=list, description="Judges behind this number.")
    subject: bool = Field(default=True, description="A model under test (false: a yardstick).")
    fit: Literal["train", "cross-fitted", "none"] | None = Field(
        default=None, description="How a reference was fitted (docs/report.md); null for a model."
    )


class ItemAddress(Frozen):
    """Which item a row is about: its task and variant, conversation, turn and id."""

    task: str
    variant: str
    conversation_id: str
    turn_index: int
    item_id: str


def item_address(task: str, variant: str, record: ItemRecord) -> dict[str, Any]:
    """The `ItemAddress` fields of a record's item, to build any row about that item."""
    where = record.model_dump(include={"conversation_id", "turn_index", "item_id"})
    return {"task": task, "variant": variant, **where}


class LeftOutItem(ItemAddress):
    """An item some compared model has no answer for, left out of every model's numbers."""

    missing_for: list[str]
    reason: str


class Correlation(Estimate):
    p_value: float | None = None


class Reliability(Estimate):
    """Split-half reliability of one task's model ranking (Spearman-Brown corrected)."""

    task: str
    models: list[str]


class TaskPair(Frozen):
    task_a: str
    task_b: str
    models: list[str]
    kendall_tau_b: Correlation
    spearman: Correlation
    p_holm: float | None = Field(description="Kendall p-value, Holm-adjusted over the pairs.")
    ceiling: Correlation = Field(description="sqrt(rel_a x rel_b): the most the ranks could agree.")
    disattenuated: Correlation = Field(description="Spearman's rho over the ceiling.")
    verdict: Verdict | None = Field(description="agree, distinct or cannot tell; null: none.")
    verdict_text: str


class RankCorrelation(Frozen):
    tasks: list[str]
    models: list[str]
    permutations: int
    reason: str | None = None
    reliability: list[Reliability] = Field(default_factory=list)
    kendall_tau_b: list[list[Correlation]]
    spearman: list[list[Correlation]]
    pairs: list[TaskPair]


class Discriminability(Frozen):
    """How well one task tells the models under test apart."""

    task: str
    variant: str
    metric: str
    models: list[str]
    snr: Estimate = Field(description="Between-model variance of true scores over the noise.")
    conversations_needed: int | None = Field(
        default=None,
        description="Conversations to separate the median pair of models at 80% power.",
    )
    items_per_conversation: float | None = None
    snr_per_item: float | None = None
    items_needed: int | None = None
    separability: float | None = None
    spread: float | None = None
    mean_ci_width: float | None = None
    spread_over_noise: float | None = None
    rank: int | None = Field(default=None, description="1 = the task that best separates models.")
    reason: str | None = None


class Ratio(Estimate):
    """How many conversations task a needs, as a multiple of what task b needs, and how many
    items: a task with more items per conversation needs fewer conversations for that alone."""

    task_a: str
    task_b: str
    items_per_conversation_a: float | None = None
    items_per_conversation_b: float | None = None
    per_item: float | None = Field(default=None, description="Items a needs over items b needs.")
    per_item_ci_low: float | None = None
    per_item_ci_high: float | None = None
    statement: str


class DiscriminabilityReport(Frozen):
    tasks: list[Discriminability]
    ratios: list[Ratio]


class Lead(Estimate):
    """A task's first model under test and its margin `value` over the second (no leader: null)."""

    task: str
    metric: str
    variant: str
    leader: str | None = None
    leader_value: float | None = None
    runner_up: str | None = None
    runner_up_value: float | None = None
    verdict: Literal["ahead", "not clearly ahead"] | None = Field(
        default=None, description="ahead: the margin's interval lies above 0."
    )


class Difference(Estimate):
    """A paired difference between two conditions on the same items (no verdict: null)."""

    model: str
    task: str
    a: str
    b: str
    n: int
    n_conversations: int
    verdict: str | None


class ModelDifference(Estimate):
    """Model a's headline minus model b's on the items every model under test answered, both
    resampled with the same draws (`analysis.comparisons.differences`)."""

    task: str
    metric: str
    variant: str
    a: str
    b: str
    a_value: float | None = None
    b_value: float | None = None
    n: int = Field(default=0, description="Items each model was scored on here.")
    n_clusters: int = Field(default=0, description="Clusters resampled (settings.cluster).")


class PersonGap(Estimate):
    """A model's headline with the person's own words shown minus hidden, on the same items."""

    model_kind: ModelKind
    variant: str = Field(description="The shown items' variant (the task's headline variant).")
    metric: str = Field(description="The task's headline metric, computed on both.")
    shown: float | None = None  # the headline on these items, the words shown
    hidden: float | None = None  # on their twins, the words hidden
    n: int = Field(description="Items answered both ways.")
    n_conversations: int
    statement: str | None = Field(default=None, description="In words, where there is an interval.")


class JudgeAgreement(Frozen):
    """A judge against the participants' own picks (`tasks.helpers.audit` statistics)."""

    judge: str
    judge_kind: ModelKind
    variant: str = Field(description="informed: with participant context; blind: without.")
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


class PanelJudge(Frozen):
    """One judge of a panel: how often it keeps its verdict when the order is swapped, and how
    often it names the participant's own pick on the audit items."""

    judge: str
    order_consistency: Estimate
    agreement: Estimate
    n_verdicts: int


class JudgePanel(Frozen):
    """The judges together: Krippendorff's alpha over every comparison they all could judge
    (nominal: first, second, tie), and the panel's majority against the participants."""

    judges: list[str]
    alpha: Estimate
    n_units: int = Field(description="Comparisons (in one order) judged by at least two judges.")
    agreement: Estimate = Field(description="The panel majority naming the participant's pick.")
    per_judge: list[PanelJudge]


class SelfPreference(Frozen):
    """A judge's win rate for its own model's or family's replies minus the participants'."""

    model: str
    relation: Literal["self", "family"]
    bias: Estimate
    judge_win_rate: float | None
    participant_win_rate: float | None
    n: int
    n_conversations: int
    statement: str | None = Field(default=None, description="Said when clear of zero.")


class JudgeBias(Frozen):
    position: Estimate = Field(description="Share of comparisons whose verdict flips with order.")
    first_shown_share: Estimate = Field(description="Share of decisive picks naming reply A.")
    length_slope: Estimate = Field(
        description="The judge's win rate per doubling of a reply's length over the other's."
    )
    participant_length_slope: Estimate
    self_preference: list[SelfPreference]


class JudgeCorrected(Frozen):
    """One judge alone on a model's replies: its win rate, corrected by its own error on the
    audited pairs, and that error (the judge minus the participants)."""

    judge: Estimate
    corrected: Estimate
    bias: Estimate


class AuditFit(Frozen):
    """How far a model's audited replies may be from its judged ones (`analysis.judges.audit_fit`):
    the correction withheld, or widened by `widened_by` each side; `withheld`/`widened` say why."""

    length_effect: float | None = Field(description="Hedges' g of log length.")
    judge_effect: float | None = Field(description="Hedges' g of the judges' win per comparison.")
    judge_shift: Estimate = Field(description="The judges' win rate, judged minus audited replies.")
    noise_limit: float = Field(description="The most the shift's interval may reach to correct.")
    widened_by: float | None = Field(default=None, description="The largest shift not excluded.")
    widened: str | None = None
    withheld: str | None = None


class CorrectedScore(Frozen):
    """A model's response win rate: by the judges alone, corrected by the participants' picks on
    the audit pairs (prediction-powered inference), and by the participants alone."""

    judge: Estimate
    corrected: Estimate
    participants: Estimate
    length_controlled: Estimate = Field(description="The judges' win rate at equal length.")
    bias: Estimate = Field(description="Judges minus participants on the audit pairs.")
    stands_in: Literal["yes", "no", "cannot tell"]
    n_judged: int
    n_audited: int
    by_judge: dict[str, JudgeCorrected] = Field(default_factory=dict)
    audit_fit: AuditFit | None = Field(default=None, description="Audited against judged replies.")


class GroupScore(Estimate):
    model: str
    task: str
    group: str
    level: str
    n: int
    n_conversations: int
    p_value: float | None = None
    p_holm: float | None = None


class Interaction(Frozen):
    """Does the gap between models change with a conversation trait? (a permutation test)"""

    task: str
    group: str
    levels: list[str]
    models: list[str]
    statistic: float | None
    p_value: float | None
    p_holm: float | None = None
    largest: str | None = Field(
        description="The model whose gap to the others moves most across the levels, and where."
    )
    reason: str | None = None


class CalibrationBin(Frozen):
    confidence: float = Field(description="Mean probability of the most probable option.")
    accuracy: float = Field(description="Share of those answers that were the gold.")
    n: int


class CalibrationCurve(Frozen):
    """A model's reliability diagram on one task's choice answers."""

    task: str
    model: str
    bins: list[CalibrationBin]


class Confusion(Frozen):
    model: str
    task: str
    labels: list[str]
    predicted: list[str] = Field(description="Columns: the labels, plus 'invalid'.")
    counts: list[list[int]]


class LabelF1(Frozen):
    model: str
    task: str
    label: str
    f1: float | None
    precision: float | None
    recall: float | None
    support: int


class ItemAnswer(Frozen):
    model: str
    status: str
    score: float | None
    prediction: str
    reasoning: str | None = None


class WorstItem(ItemAddress):
    mean_score: float
    text: str | None
    gold: str
    answers: list[ItemAnswer]


class Diagnostics(Frozen):
    confusion: list[Confusion]
    label_f1: list[LabelF1]
    turn_position: list[GroupScore]
    intensity: list[GroupScore]
    subgroups: list[GroupScore]
    interactions: list[Interaction] = Field(default_factory=list)
    calibration: list[CalibrationCurve] = Field(default_factory=list)
    worst_items: list[WorstItem]


class SelfConsistency(Estimate):
    """The people's agreement with themselves on a task's headline: their first answers (the gold)
    against the same questions asked again later (retest probes). The ceiling of a headline."""

    metric: str = Field(description="The task's headline metric, applied to (first, repeat).")
    chance: float | None = Field(
        default=None, description="The headline's chance level (Scoring.chance): 0 of the share."
    )
    n: int = Field(description="Repeat answers read (probes of the task's items).")
    n_conversations: int


class TaskInfo(Frozen):
    name: str
    headline: str = Field(description="What the headline number is.")
    provenance: list[str] = Field(default_factory=list, description="Who gave the gold.")
    headline_variant: str
    variants: list[str]
    n_items: int
    gold_levels: dict[str, int] = Field(default_factory=dict)
    derived_share: float | None = None
    judges: list[str] = Field(default_factory=list)
    left_out_items: int = Field(default=0, description="Items not every model answered.")
    left_out: dict[str, int] = Field(
        default_factory=dict, description="Planned-out items by reason."
    )


class ModelEntry(Frozen):
    name: str = Field(description="What records and tables call it.")
    spec: str
    kind: ModelKind
    role: Literal["subject", "judge"]
    answer: str = "generate"
    params: dict[str, Any] = Field(default_factory=dict, description="Sampling parameters.")
    base_url: str | None = None


class RunEntry(Frozen):
    path: str
    dataset: str
    dataset_sha256: str
    suite: SuiteInfo | None = Field(default=None, description="The suite the run was made on.")
    package_version: str
    seed: int = Field(description="The run's own seed (its pair draws, its retries).")
    limit: int | None = None
    prompts: list[str] = Field(default_factory=list, description="Prompt ids and versions.")
    task_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    started_at: str
    finished_at: str | None
    complete: bool
    planned_items: int = 0
    recorded_items: int = 0


class Settings(Frozen):
    seed: int = Field(description="The analysis's own seed (its resamples).")
    resamples: int
    corpus_resamples: int
    permutations: int
    cluster: Literal["conversation", "participant"]
    confidence: float
    min_subgroup_conversations: int
    min_conversations: int = Field(description="Below this, no interval and no verdict.")
    all_items: bool = False
    include_simulated: bool = False


class Provenance(Frozen):
    package_version: str
    dataset_sha256: list[str]
    runs: list[RunEntry]
    models: list[ModelEntry]
    judges: list[ModelEntry]
    sources: dict[str, dict[str, str]] = Field(default_factory=dict, description="Who gave what.")
    banner: list[str] = Field(default_factory=list, description="Sample, simulated or mock parts.")
    status: str = Field(default="", description="'complete', or how incomplete the runs are.")


class NoisyDifference(Estimate):
    """A difference (a simulator minus a reference), and whether it is within the run-to-run
    spread of the simulator's own figure (its `NoiseFloor`): such a difference is noise."""

    within_noise: bool | None = None


class NoiseFloor(Frozen):
    """A figure in each rollout: its spread is the smallest difference that is not noise."""

    values: list[float | None]
    sd: float | None
    spread: float | None
    note: str | None = None


class Crowd(Estimate):
    """The crowd reference: the answer most usual at an item's point of a conversation."""

    reference: str
    fit: str = Field(description="How it was fitted: cross-fitted, train or none.")


class RolloutFigure(Estimate):
    """One task's headline over every rollout of one simulator together, beside the crowd's
    and the people's own ceiling (`analysis.comparisons.rollouts`)."""

    metric: str
    description: str
    n_items: int
    n_conversations: int
    n_invalid: int
    n_failed: int
    rollouts: int
    crowd: Crowd | None = None
    minus_crowd: NoisyDifference | None = None
    ceiling: Estimate | None = Field(default=None, description="The people's own retest agreement.")
    chance: float | None = None
    share_of_ceiling: Estimate | None = None
    ceiling_reason: str | None = None


class Rollouts(Frozen):
    """One simulator run once per seed: per task, the headline over all rollouts and its spread."""

    models: list[str]
    figures: dict[str, RolloutFigure]
    noise_floor: dict[str, NoiseFloor]


class Summary(Frozen):
    format: Literal["attunebench-summary/v2"] = SUMMARY_FORMAT
    provenance: Provenance
    settings: Settings
    tasks: list[TaskInfo]
    scores: list[ScoreRow]
    rank_correlation: RankCorrelation
    discriminability: DiscriminabilityReport
    leads: list[Lead] = Field(default_factory=list, description="Per task, who leads.")
    context_modes: list[Difference]
    person_gap: dict[str, dict[str, PersonGap]] = Field(
        default_factory=dict, description="Per task and model: the headline shown minus hidden."
    )
    differences: list[ModelDifference] = Field(
        default_factory=list, description="Per pair of `report --compare A,B` and task: a - b."
    )
    judge_agreement: list[JudgeAgreement]
    judge_panel: JudgePanel | None = None
    judge_bias: dict[str, JudgeBias] = Field(default_factory=dict)
    response_corrected: dict[str, CorrectedScore] = Field(default_factory=dict)
    diagnostics: Diagnostics
    left_out_items: list[LeftOutItem] = Field(default_factory=list)
    self_consistency: dict[str, SelfConsistency] = Field(
        default_factory=dict, description="Per task re-asked: the people's own ceiling."
    )
    share_of_ceiling: dict[str, dict[str, Estimate]] = Field(
        default_factory=dict, description="Per task and model: the way from chance to the ceiling."
    )
    warnings: list[Notice]
    rollouts: dict[str, Rollouts] = Field(
        default_factory=dict, description="Per simulator run once per seed: over all rollouts."
    )
