"""Who and what produced the numbers: models and judges with their kinds, runs, data, version.

A model's kind is what run.json says, refined by its provider prefix: `mock/` models test the
harness, `baseline/` models are reference points, `proxy/` judges stand in for a real judge.
"""

from __future__ import annotations

from collections.abc import Iterable

from attunebench import __version__
from attunebench.analysis.loading import Runs
from attunebench.analysis.schema import ModelEntry, ModelKind, Provenance, RunEntry

PREFIX_KINDS: dict[str, ModelKind] = {"mock": "mock", "baseline": "baseline", "proxy": "proxy"}
KNOWN_KINDS: tuple[ModelKind, ...] = ("model", "baseline", "mock", "proxy")


def kind_of(spec: str, declared: str = "model") -> ModelKind:
    """The provider prefix wins (it cannot be mislabelled); else the declared kind."""
    prefix = spec.split("/", 1)[0]
    if prefix in PREFIX_KINDS:
        return PREFIX_KINDS[prefix]
    return next((kind for kind in KNOWN_KINDS if kind == declared), "model")


def judge_label(spec: str) -> str:
    """How a report names a judge: its spec, with `(proxy)` or `(mock)` where it is one."""
    kind = kind_of(spec)
    return spec if kind == "model" else f"{spec} ({kind})"


def declared_kinds(runs: Runs) -> dict[str, str]:
    declared: dict[str, str] = {}
    for run in runs.runs:
        for info in (*run.info.models, *run.info.judges):
            declared[info.spec] = info.kind
    return declared


def provenance(runs: Runs, subjects: Iterable[str], judges: Iterable[str]) -> Provenance:
    declared = declared_kinds(runs)
    return Provenance(
        package_version=__version__,
        dataset_sha256=runs.dataset_hashes,
        runs=[
            RunEntry(
                path=str(run.path),
                dataset=run.info.dataset,
                dataset_sha256=run.info.dataset_sha256,
                package_version=run.info.package_version,
                seed=run.info.seed,
                started_at=run.info.started_at,
                finished_at=run.info.finished_at,
                complete=run.info.complete,
            )
            for run in runs.runs
        ],
        models=[
            ModelEntry(spec=spec, kind=kind_of(spec, declared.get(spec, "model")), role="subject")
            for spec in sorted(subjects)
        ],
        judges=[
            ModelEntry(spec=spec, kind=kind_of(spec, declared.get(spec, "model")), role="judge")
            for spec in sorted(judges)
        ],
    )
