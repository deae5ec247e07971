"""One table decides a model's kind: run.json (`spec_kind`) and the analysis (`Roster`) agree."""

from __future__ import annotations

import pytest

from attunebench.analysis.provenance import Roster
from attunebench.kinds import KIND_BY_PREFIX, kind_of
from attunebench.models import PROVIDERS, spec_kind
from attunebench.records import ModelInfo


def test_every_prefix_in_the_table_is_a_provider_or_the_analysis_references() -> None:
    assert set(KIND_BY_PREFIX) - {"reference"} <= set(PROVIDERS.names())


@pytest.mark.parametrize("prefix", sorted(PROVIDERS.names()))
def test_run_json_and_the_analysis_give_every_provider_the_same_kind(prefix: str) -> None:
    spec = f"{prefix}/some-model"
    recorded = ModelInfo(spec=spec, name="m", kind=spec_kind(spec))
    assert Roster({"m": recorded}).kind("m") == spec_kind(spec)


def test_the_prefix_wins_over_a_mislabelled_declaration() -> None:
    mislabelled = ModelInfo(spec="mock/default", name="m", kind="model")
    roster = Roster({"m": mislabelled})
    assert roster.kind("m") == "mock"
    assert not roster.is_subject("m")


def test_a_language_model_keeps_its_declared_kind_but_never_reference() -> None:
    assert spec_kind("openai/gpt") == "model"
    assert kind_of("openai/gpt", declared="simulated") == "simulated"
    assert kind_of("openai/gpt", declared="reference") == "model"
    assert kind_of("openai/gpt", declared="nonsense") == "model"
    assert kind_of("reference/length") == "reference"
