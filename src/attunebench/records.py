"""The run directory's on-disk formats: `records.jsonl` lines, `run.json` and `ledger.json`.

These are the contract between the engine (which writes them) and analysis and reports (which
read them). Everything is versioned and strict; docs/architecture.md describes each file.
Records are `attunebench-record/v2`, whose `prediction` and `gold` are the task's typed models
as JSON; `rundir.read_records` converts v1 lines (`records_v1`).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from attunebench.frozen import Frozen

RECORD_FORMAT: Final = "attunebench-record/v2"
RUN_FORMAT: Final = "attunebench-run/v1"
LEDGER_FORMAT: Final = "attunebench-ledger/v1"

Status = Literal["ok", "invalid", "failed"]
# ok: parsed and scored. invalid: the model answered but the answer could not be used (raw
# kept; scored as the task's worst value). failed: no answer could be had (bounded retries ran
# out; never scored as an answer, counted, retried on resume).
AnswerMode = Literal["generate", "choice"]
JUDGE_FAILED: Final = "judge-failed"
# A record's flag: a judge call failed for good (after the retries) and its verdict was scored
# as a loss for the model judged, as an unreadable verdict is. The record keeps the error.


class Verdict(Frozen):
    """One judge call: everything needed to audit it."""

    judge: str
    prompt_id: str
    prompt_version: str
    mode: Literal["pairwise", "rubric", "proxy"]
    order: str | None = Field(default=None, description="e.g. 'model-first' / 'reference-first'")
    rendered_prompt: str
    raw_output: str
    parsed: dict[str, Any] | None = None
    status: Status = "ok"


class Distribution(Frozen):
    """A choice answer: the probability of each option key; `floored` keys were missing from
    the provider's top-k and were given its floor probability."""

    probabilities: dict[str, float]
    floored: tuple[str, ...] = ()


class ItemRecord(Frozen):
    """One scored item: one (task, model, item) with its prediction, gold and score."""

    format: Literal["attunebench-record/v2"] = RECORD_FORMAT
    task: str
    model: str
    conversation_id: str
    turn_index: int
    item_id: str = Field(description="Stable id of the item within its task and conversation.")
    variant: str = Field(default="", description="Context mode or other variant, e.g. 'blind'.")
    status: Status
    mode: AnswerMode = "generate"
    prediction: dict[str, Any] | None = Field(
        default=None, description="The task's typed prediction (partial for an invalid answer)."
    )
    gold: dict[str, Any] | None = Field(default=None, description="The task's typed gold.")
    score: float | None = Field(default=None, description="The task's primary per-item score.")
    scores: dict[str, float | None] = Field(
        default_factory=dict, description="The task's other per-item values."
    )
    flags: tuple[str, ...] = Field(
        default=(), description="Conditions a reader must know, e.g. 'one-order-only'."
    )
    raw_output: str | None = None
    distributions: dict[str, Distribution] = Field(
        default_factory=dict, description="Choice answers, by query."
    )
    error: str | None = None
    permanent: bool = Field(
        default=False, description="A failure no retry can mend (HTTP 4xx other than 429)."
    )
    verdicts: tuple[Verdict, ...] = ()
    thinking: dict[str, str] = Field(
        default_factory=dict,
        description="Reasoning text the model showed before answering, by query; never parsed.",
    )
    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = Field(default=0, description="The part of output_tokens reasoned.")
    cost_usd: float = 0.0
    latency_s: float = 0.0
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str, int, str, str]:
        key: tuple[str, str, str, int, str, str] = RECORD_KEY(self)
        return key


# A record's key (`ItemRecord.key`), read from many records by one C-level `map`.
RECORD_KEY: Final = attrgetter(
    "task", "model", "conversation_id", "turn_index", "item_id", "variant"
)


def retry_on_resume(record: ItemRecord) -> bool:
    """Whether a resumed run asks for this record again: a failed one, or one with a judge
    verdict lost to a failure that was not permanent (a timeout, a server error)."""
    return record.status == "failed" or (JUDGE_FAILED in record.flags and not record.permanent)


class ModelInfo(Frozen):
    spec: str
    name: str | None = Field(
        default=None, description="What records call this model (ItemRecord.model); spec if unset."
    )
    role: Literal["subject", "judge"] = "subject"
    params: dict[str, Any] = Field(default_factory=dict)
    base_url: str | None = None
    kind: str = Field(default="model", description="model | baseline | mock | proxy | simulated")
    answer: AnswerMode = "generate"
    family: str | None = Field(default=None, description="Its family, from the models file.")
    json_schema: bool = Field(
        default=False, description="Its answers were constrained to each task's JSON schema."
    )


class PromptInfo(Frozen):
    id: str
    version: str


class SkippedPair(Frozen):
    """A (task, model) pair left out of the plan: the model cannot answer what the task asks
    (a baseline with no reply to write, a fitted baseline whose train split lacks the gold, a
    judged task run without a judge). Not planned, not recorded, not a failure."""

    task: str
    model: str
    reason: str


class SuiteInfo(Frozen):
    """The fixed item set a run was made on (`run --suite`): runs on different versions or
    digests are not ranked together."""

    name: str
    version: str
    digest: str = Field(description="SHA-256 of the suite's manifest.")
    train: str | None = Field(
        default=None,
        description="Its train split, relative to the run directory (what references fit on).",
    )
    train_sha256: str | None = Field(default=None, description="SHA-256 of the train split.")

    @property
    def identity(self) -> tuple[str, str, str]:
        """What makes two runs' item sets the same: name, version and manifest digest (where
        each run keeps the train split is its own)."""
        return self.name, self.version, self.digest


class RunInfo(Frozen):
    format: Literal["attunebench-run/v1"] = RUN_FORMAT
    package_version: str
    dataset: str
    dataset_sha256: str
    dataset_ids: list[str] = Field(default_factory=list, description="source names in the data")
    provenance: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="Per source name, who gave each labelled field."
    )
    tasks: list[str]
    task_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    left_out: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Per task, items left out on purpose, by reason."
    )
    models: list[ModelInfo]
    judges: list[ModelInfo] = Field(default_factory=list)
    prompts: list[PromptInfo] = Field(default_factory=list)
    seed: int
    limit: int | None = None
    suite: SuiteInfo | None = Field(default=None, description="The suite, when run as one.")
    person: Literal["shown", "hidden", "both"] = Field(
        default="shown",
        description="The items as shown, their person-hidden twins (the person's words hidden), "
        "or both (--person).",
    )
    planned_items: int = 0
    empty_tasks: list[str] = Field(default_factory=list, description="tasks with 0 items here")
    skipped: list[SkippedPair] = Field(default_factory=list, description="pairs not applicable")
    shard: str | None = Field(
        default=None, description="i/N: this run holds shard i of N of the plan (--shard)."
    )
    adapted: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="Per model, the request parameters the pre-flight dropped or renamed.",
    )
    capabilities: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per hosted model, what it accepts as found at start-up; `source` says "
        "whether its provider's models endpoint described it or the table did.",
    )
    started_at: str
    finished_at: str | None = None
    complete: bool = False


class Tally(BaseModel):
    """A ledger entry's counts. Not frozen: the engine's ledger counts in one as each call
    settles (`engine.ledger`)."""

    model_config = ConfigDict(extra="forbid")

    calls: int = Field(default=0, description="Calls answered (each try that failed is a retry).")
    cache_hits: int = Field(default=0, description="Answers read from the cache: no call made.")
    failures: int = Field(default=0, description="Calls that failed on their last try.")
    retries: int = Field(default=0, description="Tries that failed and were made again.")
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = Field(default=0, description="The part of output_tokens reasoned.")
    batch_calls: int = Field(default=0, description="Calls answered through a batch API.")
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached_input_tokens: int = Field(
        default=0, description="The part of input_tokens read from the prompt cache."
    )
    truncated: int = Field(
        default=0,
        description="Answers cut off at their token budget (finish reason length or max_tokens).",
    )
    cache_write_tokens: int = Field(
        default=0, description="The part of input_tokens written to the prompt cache."
    )
    lost: int = Field(
        default=0,
        description=(
            "Calls sent whose answer was never kept: on the wire when the run was stopped or "
            "its process killed (a provider may bill them)."
        ),
    )

    def counts(self) -> dict[str, int | float]:
        """The counts alone (of a ledger entry too), by name."""
        return {name: getattr(self, name) for name in Tally.model_fields}

    def minus(self, other: Tally) -> Tally:
        theirs = other.counts()
        return Tally(**{name: value - theirs[name] for name, value in self.counts().items()})

    def add(self, other: Tally) -> None:
        for name, value in other.counts().items():
            setattr(self, name, getattr(self, name) + value)


class _EntryKey(Frozen):
    model: str
    task: str
    role: Literal["subject", "judge"]


class LedgerEntry(Tally, _EntryKey):
    """One (model, task, role)'s counts in ledger.json: its key first, then the counts."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ServerUsage(Frozen):
    """A model server the run started itself (a `local/` model's llama-server), over every
    session of the run: how long it was up, and the sums of the `timings` it returned with
    its answers."""

    sessions: int = Field(default=1, ge=0, description="Runs (sessions) that started it.")
    up_s: float = Field(default=0.0, ge=0, description="Wall seconds from start to stop.")
    requests: int = Field(default=0, ge=0, description="Answers that carried timings.")
    prompt_ms: float = Field(default=0.0, ge=0, description="Reading prompts.")
    prompt_n: int = Field(default=0, ge=0, description="Prompt tokens evaluated.")
    cache_n: int = Field(default=0, ge=0, description="Prompt tokens reused from its cache.")
    predicted_ms: float = Field(default=0.0, ge=0, description="Generating tokens.")
    predicted_n: int = Field(default=0, ge=0, description="Tokens generated.")

    def plus(self, other: ServerUsage) -> ServerUsage:
        fields = type(self).model_fields
        return ServerUsage(**{name: getattr(self, name) + getattr(other, name) for name in fields})

    def busy_share(self) -> float | None:
        """The share of its wall time the server spent on prompts and generation.

        >>> ServerUsage(up_s=10.0, prompt_ms=3000.0, predicted_ms=1000.0).busy_share()
        0.4
        """
        busy = (self.prompt_ms + self.predicted_ms) / 1000
        return busy / self.up_s if self.up_s > 0 else None

    def cached_share(self) -> float | None:
        """The share of prompt tokens read from its prefix cache rather than evaluated."""
        total = self.cache_n + self.prompt_n
        return self.cache_n / total if total else None


class Ledger(Frozen):
    format: Literal["attunebench-ledger/v1"] = LEDGER_FORMAT
    entries: list[LedgerEntry] = Field(default_factory=list)
    servers: dict[str, ServerUsage] = Field(
        default_factory=dict,
        description="Per model name, the server the run started for it (local/ models).",
    )
