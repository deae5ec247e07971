"""The pre-flight call: one real call per model, with its own parameters, before anything is
planned. A server that refuses a parameter (a reasoning model refusing `max_tokens` or a
temperature, a model that does not reason refusing `reasoning_effort`, an unknown field in
`params.extra`) answers the same to every call of the run; the pre-flight turns that answer
into one line naming the parameter and the models-file setting that fixes it, instead of
thousands of failed items.

The call is small (`PROBE_MAX_TOKENS` of answer) and carries the header `PREFLIGHT_HEADER`, so a
test server can tell it from the run's calls. Only a refusal stops the run: a timeout, a 429
or a 5xx is the run's retries' business.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Final

from attunebench.models.base import GenerateParams, Message, ProviderError
from attunebench.models.registry import ProviderConfigError

PREFLIGHT_HEADER: Final = "X-AttuneBench-Preflight"
PROBE_MAX_TOKENS: Final = 16
PROBE_MESSAGES: Final = (
    Message("user", 'Reply with the JSON object {"ok": true} and nothing else.'),
)

# Where a server names the parameter it refuses: OpenAI's `param` field and messages
# ("Unsupported parameter: 'max_tokens' ...", "Unrecognized request argument supplied: x"),
# Anthropic's ("`temperature` may only be set to 1 ...", "top_k: Extra inputs are not
# permitted", "thinking.budget_tokens: Input should be ...").
_PARAMETER = (
    re.compile(r"""["']param["']\s*:\s*["']([\w.\[\]]+)["']"""),
    re.compile(r"Unsupported (?:parameter|value): '([\w.]+)'"),
    re.compile(r"Unrecognized request argument supplied: ([\w.]+)"),
    re.compile(r"`([\w.]+)`"),
    re.compile(r"""["']message["']\s*:\s*["']([\w.]+): """),
)
_MESSAGE = re.compile(r"""["']message["']\s*:\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')""")


def probe_params(params: GenerateParams) -> GenerateParams:
    """A model's parameters as its calls send them (JSON mode, which tasks ask for, unless the
    entry says otherwise), with a small answer budget."""
    update: dict[str, Any] = {"max_tokens": min(params.max_tokens, PROBE_MAX_TOKENS)}
    if "json_mode" not in params.model_fields_set:
        update["json_mode"] = True
    return params.model_copy(update=update)


def refused_parameter(text: str, sent: Collection[str]) -> str | None:
    """The field of the request `sent` that an error body names, top-level (`thinking`, not
    `thinking.budget_tokens`); None if it names none (a wrong model name, say).

    >>> body = '{"error": {"message": "Unsupported parameter: ...", "param": "max_tokens"}}'
    >>> refused_parameter(body, {"model", "max_tokens"})
    'max_tokens'
    """
    for pattern in _PARAMETER:
        for found in pattern.finditer(text):
            name = found.group(1).split(".")[0].split("[")[0]
            if name in sent:
                return name
    return None


def server_message(text: str) -> str:
    found = _MESSAGE.search(text)
    message = (found.group(1) or found.group(2)) if found else text
    return " ".join(message.replace('\\"', '"').split())[:300]


def refusal(
    spec: str,
    error: ProviderError,
    *,
    sent: Collection[str],
    fixes: Mapping[str, str],
    params: GenerateParams,
) -> ProviderConfigError | None:
    """The one-line error that stops the run for a refused call whose request had the fields
    `sent`, or None for an error worth no stop (one that trying again may mend)."""
    if error.retryable:
        return None
    text = str(error)
    if error.status is None:  # refused before it was sent: the provider's own message
        return ProviderConfigError(f"{spec}: {text}")
    parameter = refused_parameter(text, sent)
    said = server_message(text)
    if parameter is None or parameter in ("messages", "model"):
        return ProviderConfigError(
            f"{spec} refused the pre-flight call (HTTP {error.status}): {said}"
        )
    if parameter in params.extra:
        fix = f"remove {parameter} from params.extra"
    else:
        fix = fixes.get(parameter, f"leave {parameter} out of the entry's params and options")
    return ProviderConfigError(
        f"{spec} refuses the parameter '{parameter}' (HTTP {error.status}: {said}); "
        f"fix its models-file entry: {fix}"
    )
