"""What a model is, decided once: the one table from a spec's provider prefix to its kind.

run.json records each model's kind and the analysis reads it back; both ask this table, so
they cannot disagree. The prefix wins over a declared kind, since it cannot be mislabelled:
`mock/` tests the harness, `baseline/` is a reference point, `proxy/` stands in for a judge,
`sim/` is a simulated instrument for validating the statistics, `reference/` a heuristic scored
from the gold alone. Any other prefix names a language model, `model`: the kind under test.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, get_args

ModelKind = Literal["model", "baseline", "mock", "proxy", "simulated", "reference"]

KIND_BY_PREFIX: Final[Mapping[str, ModelKind]] = {
    "mock": "mock",
    "baseline": "baseline",
    "proxy": "proxy",
    "sim": "simulated",
    "reference": "reference",
}
# What run.json may declare: `reference` rows are made by the analysis, never by a run.
DECLARED_KINDS: Final[tuple[ModelKind, ...]] = tuple(
    kind for kind in get_args(ModelKind) if kind != "reference"
)


def prefix_kind(prefix: str) -> ModelKind:
    """The kind of the models a provider prefix makes.

    >>> prefix_kind("baseline"), prefix_kind("openai")
    ('baseline', 'model')
    """
    return KIND_BY_PREFIX.get(prefix, "model")


def kind_of(spec: str, declared: str = "model") -> ModelKind:
    """The spec's prefix's kind where the table has it, else the declared kind where a run may
    declare it, else `model`.

    >>> kind_of("sim/strong", declared="model"), kind_of("openai/x", declared="simulated")
    ('simulated', 'simulated')
    """
    prefix = spec.partition("/")[0]
    if prefix in KIND_BY_PREFIX:
        return KIND_BY_PREFIX[prefix]
    return next((kind for kind in DECLARED_KINDS if kind == declared), "model")
