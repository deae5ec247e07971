"""Who and what produced the numbers: models and judges with their kinds, runs, data, version.

Records call a model by its name (`ModelInfo.name`, the spec where unset); run.json maps each
name to its spec and declared kind. The provider prefix of the spec wins over the declared
kind, since it cannot be mislabelled: `mock/` models test the harness, `baseline/` models are
reference points, `proxy/` judges stand in for a real judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from attunebench import __version__
from attunebench.analysis.loading import Runs
from attunebench.analysis.schema import ModelEntry, ModelKind, Provenance, RunEntry
from attunebench.records import ModelInfo

PREFIX_KINDS: dict[str, ModelKind] = {"mock": "mock", "baseline": "baseline", "proxy": "proxy"}
KNOWN_KINDS: tuple[ModelKind, ...] = ("model", "baseline", "mock", "proxy")


def kind_of(spec: str, declared: str = "model") -> ModelKind:
    """The provider prefix's kind where it has one, else the declared kind."""
    prefix = spec.split("/", 1)[0]
    if prefix in PREFIX_KINDS:
        return PREFIX_KINDS[prefix]
    return next((kind for kind in KNOWN_KINDS if kind == declared), "model")


@dataclass(frozen=True)
class Roster:
    """Every model and judge of the runs, by the name records use."""

    entries: Mapping[str, ModelInfo]

    @classmethod
    def of(cls, runs: Runs) -> Roster:
        return cls({
            info.name or info.spec: info
            for run in runs.runs
            for info in (*run.info.models, *run.info.judges)
        })  # fmt: skip

    def spec(self, name: str) -> str:
        info = self.entries.get(name)
        return info.spec if info is not None else name

    def kind(self, name: str) -> ModelKind:
        info = self.entries.get(name)
        return kind_of(self.spec(name), info.kind if info is not None else "model")

    def entry(self, name: str, role: str) -> ModelEntry:
        return ModelEntry(name=name, spec=self.spec(name), kind=self.kind(name),
                          role="judge" if role == "judge" else "subject")  # fmt: skip


def provenance(
    runs: Runs, roster: Roster, subjects: Iterable[str], judges: Iterable[str]
) -> Provenance:
    return Provenance(
        package_version=__version__,
        dataset_sha256=runs.dataset_hashes,
        runs=[
            RunEntry(
                path=str(run.path), dataset=run.info.dataset,
                dataset_sha256=run.info.dataset_sha256, package_version=run.info.package_version,
                seed=run.info.seed, started_at=run.info.started_at,
                finished_at=run.info.finished_at, complete=run.info.complete,
            )
            for run in runs.runs
        ],
        models=[roster.entry(name, "subject") for name in sorted(subjects)],
        judges=[roster.entry(name, "judge") for name in sorted(judges)],
    )

