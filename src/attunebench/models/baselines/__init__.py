"""Baselines that need no language model: `baseline/NAME`, options as keywords or a query
(`baseline/knn?train=train.jsonl&k=3`, which fits on a command line and keeps the options in
the spec that run.json and reports show).

| name       | options                         | what it answers                          |
|------------|---------------------------------|------------------------------------------|
| `random`   | `seed` (default 0)              | uniform guesses, fixed by (seed, item)   |
| `majority` | `train` (required)              | the train split's usual answer           |
| `longer`   | none                            | the longer reply (length-bias reference) |
| `lexicon`  | none                            | NRC emotion words, VADER sentiment       |
| `knn`      | `train` (required), `k`, `encoder` | the k nearest train examples, combined |"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from attunebench.frozen import Frozen
from attunebench.models.baselines.base import Baseline
from attunebench.models.baselines.knn import KnnBaseline, KnnOptions
from attunebench.models.baselines.lexicon import LexiconBaseline
from attunebench.models.baselines.longer import LongerBaseline
from attunebench.models.baselines.majority import MajorityBaseline, MajorityOptions
from attunebench.models.baselines.random import RandomBaseline, RandomOptions
from attunebench.models.registry import PROVIDERS, ProviderConfigError, SpecError, spec_options
from attunebench.registry import Registry

__all__ = ["KnnBaseline"]  # what callers import from here; the rest registers

Opts = TypeVar("Opts", bound=Frozen)
BaselineFactory = Callable[[str, dict[str, Any]], Baseline]
BASELINES: Registry[BaselineFactory] = Registry("baseline")


class NoOptions(Frozen):
    """No options at all."""


def _read(kind: type[Opts], make: Callable[[str, Opts], Baseline]) -> BaselineFactory:
    """`make` given the spec and the options read into `kind`."""

    def factory(spec: str, options: dict[str, Any]) -> Baseline:
        return make(spec, spec_options(kind, spec, options))

    return factory


def _longer(spec: str, _: NoOptions) -> Baseline:
    return LongerBaseline(spec)


def _lexicon(spec: str, _: NoOptions) -> Baseline:
    if importlib.util.find_spec("vaderSentiment") is None:
        raise ProviderConfigError(
            f"{spec} needs VADER, of the `lexicon` extra: pip install 'attunebench[lexicon]'"
        )
    if importlib.util.find_spec("nrclex") is None:
        raise ProviderConfigError(
            f"{spec} needs the NRC emotion lexicon: pip install --no-deps 'nrclex>=4.1,<5'"
        )
    return LexiconBaseline(spec)


BASELINES.register("random")(_read(RandomOptions, RandomBaseline))
BASELINES.register("majority")(_read(MajorityOptions, MajorityBaseline))
BASELINES.register("longer")(_read(NoOptions, _longer))
BASELINES.register("lexicon")(_read(NoOptions, _lexicon))
BASELINES.register("knn")(_read(KnnOptions, KnnBaseline))


@PROVIDERS.register("baseline")
def make_baseline(model: str, **options: Any) -> Baseline:
    """The baseline `model` names (`knn` or `knn?train=FILE&k=3`), with keyword options."""
    name, _, query = model.partition("?")
    spec = f"baseline/{model}"
    from_query = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    clash = sorted(set(from_query) & set(options))
    if clash:
        raise SpecError(f"model spec {spec!r}: option {clash[0]!r} given twice")
    try:
        factory = BASELINES.get(name)
    except KeyError as error:
        raise SpecError(f"model spec {spec!r}: {error}") from None
    return factory(spec, {**from_query, **options})
