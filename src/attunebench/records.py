"""The run directory's on-disk formats: `records.jsonl` lines, `run.json` and `ledger.json`.

These are the contract between the engine (which writes them) and analysis and reports (which
read them). Everything is versioned and strict. See DESIGN.md, "The run directory".
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

RECORD_FORMAT: Final = "attunebench-record/v1"
RUN_FORMAT: Final = "attunebench-run/v1"
LEDGER_FORMAT: Final = "attunebench-ledger/v1"

Status = Literal["ok", "invalid", "failed"]
# ok: parsed and scored. invalid: the model answered but the answer could not be parsed (raw
# kept; counts against the model). failed: no answer could be had (bounded retries ran out;
# never scored as an answer).


class Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Verdict(Strict):
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


class ItemRecord(Strict):
    """One scored item: one (task, model, item) with its prediction, gold and score."""

    format: Literal["attunebench-record/v1"] = RECORD_FORMAT
    task: str
    model: str
    conversation_id: str
    turn_index: int
    item_id: str = Field(description="Stable id of the item within its task and conversation.")
    variant: str = Field(default="", description="Context mode or other variant, e.g. 'blind'.")
    status: Status
    prediction: Any = None
    gold: Any = None
    score: float | None = Field(default=None, description="The task's primary per-item score.")
    scores: dict[str, float | None] = Field(default_factory=dict)
    raw_output: str | None = None
    error: str | None = None
    verdicts: tuple[Verdict, ...] = ()
    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str, int, str, str]:
        return (
            self.task,
            self.model,
            self.conversation_id,
            self.turn_index,
            self.item_id,
            self.variant,
        )


class ModelInfo(Strict):
    spec: str
    name: str | None = Field(
        default=None, description="What records call this model (ItemRecord.model); spec if unset."
    )
    role: Literal["subject", "judge"] = "subject"
    params: dict[str, Any] = Field(default_factory=dict)
    base_url: str | None = None
    kind: str = Field(default="model", description="model | baseline | mock | proxy")


class PromptInfo(Strict):
    id: str
    version: str


class SkippedPair(Strict):
    """A (task, model) pair left out of the plan: the model cannot answer what the task asks
    (a baseline with no reply to write). Not planned, not recorded, not a failure."""

    task: str
    model: str
    reason: str


class RunInfo(Strict):
    format: Literal["attunebench-run/v1"] = RUN_FORMAT
    package_version: str
    dataset: str
    dataset_sha256: str
    dataset_ids: list[str] = Field(default_factory=list, description="source names in the data")
    tasks: list[str]
    task_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    models: list[ModelInfo]
    judges: list[ModelInfo] = Field(default_factory=list)
    prompts: list[PromptInfo] = Field(default_factory=list)
    seed: int
    limit: int | None = None
    planned_items: int = 0
    skipped: list[SkippedPair] = Field(default_factory=list, description="pairs not applicable")
    started_at: str
    finished_at: str | None = None
    complete: bool = False


class LedgerEntry(Strict):
    model: str
    task: str
    role: Literal["subject", "judge"]
    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0


class Ledger(Strict):
    format: Literal["attunebench-ledger/v1"] = LEDGER_FORMAT
    entries: list[LedgerEntry] = Field(default_factory=list)
