"""The options anthropic/ and openai/ share (`models.hosted.HostedOptions`): taken, applied,
and a misspelt one named with every option the provider takes, its own and the shared ones."""

from __future__ import annotations

import pytest

from attunebench.models.anthropic import AnthropicProvider
from attunebench.models.hosted import HOSTED_OPTIONS
from attunebench.models.modelsfile import ModelEntry, option_error
from attunebench.models.openai_compat import OpenAICompatProvider
from attunebench.models.registry import make_provider

LOCAL = "http://127.0.0.1:9/v1"


def _refused(spec: str, **options: object) -> str:
    entry = ModelEntry(name="m", spec=spec, options=options)
    with pytest.raises(TypeError) as refused:
        make_provider(entry.spec, **entry.provider_options())
    return str(option_error(entry, refused.value))


@pytest.mark.parametrize(
    ("spec", "own"),
    [("openai/gpt-4o-mini", {"json_mode", "api", "chat"}), ("anthropic/claude-x", {"api_version"})],
)
def test_a_misspelt_option_is_named_with_the_shared_and_the_own_options(
    spec: str, own: set[str]
) -> None:
    said = _refused(spec, base_url=LOCAL, batch_sise=3)
    head, _, listed = said.partition("(options: ")
    prefix = spec.partition("/")[0]
    assert head == f"models.m.options.batch_sise: not an option of {prefix}/ models "
    named = set(listed.rstrip(")").split(", "))
    assert named >= HOSTED_OPTIONS
    assert named >= own
    assert "batch_sise" not in named


def test_the_shared_options_are_applied_by_both_providers() -> None:
    shared = {"base_url": LOCAL, "api_key": "k", "timeout_s": 7.0, "sampling": False}
    openai = OpenAICompatProvider("gpt-4o-mini", **shared)
    assert (openai.base_urls, openai._timeout.total) == ([LOCAL], 7.0)
    assert openai._headers["Authorization"] == "Bearer k"
    assert not openai.capabilities.sampling
    claude = AnthropicProvider("claude-x", **shared)
    assert (claude.base_url, claude._timeout_s, claude.capabilities.sampling) == (LOCAL, 7.0, False)


def test_batch_options_reach_the_queue() -> None:
    provider = OpenAICompatProvider(
        "gpt-4o-mini", base_url=LOCAL, batch=True, batch_size=5, batch_tokens=1000, batch_poll_s=3
    )
    assert provider._batches is not None
    assert provider._batches.api.limits.max_requests == 5
    assert provider.batch_budget() == 1000
    timing = provider._batches.timing
    assert (timing.poll_s, timing.quiet_s, timing.wait_s) == (3, 2.0, 60.0)  # the rest default
    live = OpenAICompatProvider("gpt-4o-mini", base_url=LOCAL)
    assert live._batches is None and live.batch_budget() is None
