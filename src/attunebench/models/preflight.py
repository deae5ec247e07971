"""The pre-flight call: one real call per model (and per body: the choice body too, for a model
in choice mode), with its own parameters, before anything is planned.

A server that refuses a parameter answers the same to every call of the run. What the
capability table (`models.capabilities`) did not predict is handled here:

- a parameter the provider added on its own (a temperature, a top_p, a seed, JSON mode, the
  budget's field name) is *adapted*: dropped, or renamed (`max_tokens` and
  `max_completion_tokens` into each other, for OpenAI's API only: Anthropic's requires
  `max_tokens`, so a provider passes what it may adapt, `adaptable`), or changed as the
  provider says (`Adapting._adaptation`), and the call tried again. Each adaptation is
  kept by the provider (`Adapting.adapted`), written to run.json under `adapted` and said in
  one line; it does not stop the run;
- a parameter the models file asked for (`params.extra`, `reasoning_effort`, thinking, an
  effort), or a refusal of the call itself (a wrong model name, an account without credit),
  stops the run with one line naming the models-file fix.

Which parameter a refusal names is read from the error's structured fields (OpenAI's
`error.param`); Anthropic's errors carry only a type and a message, so there the parameter
is the field of the request the message names. Nothing is guessed: a refusal that names no
field of the request, or several that cannot all be adapted, stops the run with the
provider's message verbatim and the parameters sent, and no fix; a fix is suggested only for
the one parameter the refusal names. The call is small (`PROBE_MAX_TOKENS` of
answer) and carries the header `PREFLIGHT_HEADER`, so a test server can tell it apart. A
timeout, a rate limit or a 5xx is the run's retries' business, except a first call answered
404, 405 or 501 with no vendor's error in the body (`NOT_AN_API`): that is a web server that
does not speak the API, and every call would answer the same, so it stops the run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any, Final

from attunebench.models.base import GenerateParams, Message, ProviderError
from attunebench.models.capabilities import Capabilities
from attunebench.models.registry import ProviderConfigError

PREFLIGHT_HEADER: Final = "X-AttuneBench-Preflight"
PROBE_MAX_TOKENS: Final = 16
PROBE_MESSAGES: Final = (
    Message("user", 'Reply with the JSON object {"ok": true} and nothing else.'),
)
# What the provider adds on its own and may therefore change: None drops the field, a name
# renames it. Listed in the order to give up on (least missed first), for a refusal that
# names two fields ("`temperature` and `top_p` cannot both be specified").
ADAPTABLE: Final[Mapping[str, str | None]] = {
    "top_k": None,
    "top_p": None,
    "seed": None,
    "stop": None,
    "stop_sequences": None,
    "response_format": None,
    "max_tokens": "max_completion_tokens",
    "max_completion_tokens": "max_tokens",
    "temperature": None,
}
MAX_ADAPTATIONS: Final = len(ADAPTABLE)
RENAMES: Final = frozenset({"max_tokens", "max_completion_tokens"})
# What a server that does not serve the API's path answers (not found, method not allowed, not
# implemented): from a bare web server, never from an API refusing a model name (its 404 has
# the vendor's error body).
NOT_AN_API: Final = frozenset({404, 405, 501})


def probe_params(params: GenerateParams) -> GenerateParams:
    """A model's parameters as its calls send them (JSON mode, which tasks ask for, unless the
    entry says otherwise), with a small answer budget."""
    update: dict[str, Any] = {"max_tokens": min(params.max_tokens, PROBE_MAX_TOKENS)}
    if "json_mode" not in params.model_fields_set:
        update["json_mode"] = True
    return params.model_copy(update=update)


def adapt(body: dict[str, Any], adapted: Mapping[str, str]) -> dict[str, Any]:
    """`body` with the pre-flight's adaptations applied (`dropped`, or `renamed to X`; any
    other action is the provider's own, applied as it builds the body)."""
    for name, action in adapted.items():
        if name in body and (action == "dropped" or action.startswith("renamed to ")):
            value = body.pop(name)
            if action.startswith("renamed to "):
                body[action.removeprefix("renamed to ")] = value
    return body


def named_parameters(
    error: ProviderError, sent: Collection[str], adaptable: Mapping[str, str | None] = ADAPTABLE
) -> list[str]:
    """The top-level fields of the request `sent` that a refusal names, most likely first:
    OpenAI's `error.param` alone where it is given; else each field the message writes as a
    field (`thinking.type`, `max_tokens:`, in backticks), or failing any, in prose; among
    those, what may be adapted first, least missed first (ADAPTABLE's order).

    >>> said = 'thinking.type: "disabled" is not supported for this model'
    >>> error = ProviderError("", retryable=False, said=said)
    >>> named_parameters(error, ["model", "thinking"])
    ['thinking']
    """
    if error.param:
        name = error.param.split(".")[0].split("[")[0]
        return [name] if name in sent else []
    said = error.said or ""
    named = [n for n in sent if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", said)]
    # A field: in backticks, or followed by a colon, an index or a sub-field's name (not by
    # the full stop of "for this model.").
    field = r"(`|:|\[|\.(?=\w))"
    as_fields = [n for n in named if re.search(rf"(?<![\w])`?{re.escape(n)}{field}", said)]
    order = list(adaptable)
    return sorted(as_fields or named, key=lambda n: order.index(n) if n in order else len(order))


def _said(error: ProviderError) -> str:
    """The provider's own message, verbatim, on one line (its line breaks as spaces)."""
    text = error.said or str(error)
    return " ".join(text.splitlines())


def sent_line(sent: Mapping[str, Any]) -> str:
    """The parameters of a request as sent (its messages left out), for a stop line.

    >>> sent_line({"model": "m", "messages": [], "thinking": {"type": "disabled"}})
    'model="m", thinking={"type": "disabled"}'
    """
    return ", ".join(
        f"{name}={json.dumps(value)}" for name, value in sent.items() if name != "messages"
    )


def stop_line(
    spec: str,
    error: ProviderError,
    parameter: str | None,
    *,
    fixes: Mapping[str, str],
    params: GenerateParams,
    sent: Mapping[str, Any],
) -> ProviderConfigError:
    """The one line that stops the run for a refusal the pre-flight cannot adapt: the
    provider's message verbatim and what was sent; a fix only for a `parameter` the refusal
    itself named (alone)."""
    if error.status is None:  # refused before it was sent: the provider's own message
        return ProviderConfigError(f"{spec}: {error}")
    said, what = _said(error), sent_line(sent)
    if parameter is None or parameter in ("messages", "model"):
        return ProviderConfigError(
            f"{spec} refused the pre-flight call (HTTP {error.status}): {said}; sent: {what}"
        )
    if parameter in params.extra:
        fix = f"remove {parameter} from params.extra"
    else:
        fix = fixes.get(parameter, f"leave {parameter} out of the entry's params and options")
    return ProviderConfigError(
        f"{spec} refuses the parameter '{parameter}' (HTTP {error.status}: {said}); "
        f"sent: {what}; fix its models-file entry: {fix}"
    )


class Adapting:
    """A provider whose requests the pre-flight may adapt; `adapted` maps each changed
    parameter to what was done (`dropped`, `renamed to max_completion_tokens`)."""

    _adapted: dict[str, str]
    capabilities: Capabilities
    adaptable: Mapping[str, str | None] = ADAPTABLE  # what this provider's pre-flight may change

    @property
    def adapted(self) -> dict[str, str]:
        return self._adapted

    def adopt(self, found: Mapping[str, Any], params: GenerateParams) -> None:
        """What the pre-flight adapted, and the capabilities it found (`Provider.found`)."""
        self._adapted = dict(found.get("adapted") or {})
        if found.get("capabilities") is not None:
            self.capabilities = Capabilities.model_validate(found["capabilities"])

    async def preflight(
        self,
        build: Callable[[], dict[str, Any]],
        send: Callable[[dict[str, Any]], Awaitable[None]],
        *,
        spec: str,
        fixes: Mapping[str, str],
        params: GenerateParams,
    ) -> None:
        """Send `build()` until it is accepted, adapting what may be adapted; raise the one
        line that stops the run for anything else."""
        for _ in range(MAX_ADAPTATIONS + 1):
            sent: dict[str, Any] = {}
            try:
                sent = build()
                await send(sent)
                return
            except ProviderError as error:
                if error.retryable:
                    return  # a rate limit, a 5xx: the run's retries will see to it
                named = named_parameters(error, sent, self.adaptable) if error.status else []
                parameter = self._refused(named)
                action = self._adaptation(parameter, params)
                if error.status is None or action is None or parameter is None:
                    alone = named[0] if len(named) == 1 else None
                    raise stop_line(
                        spec, error, alone, fixes=fixes, params=params, sent=sent
                    ) from None
                self._adapted[parameter] = action
        raise ProviderConfigError(
            f"{spec} refused the pre-flight call after {MAX_ADAPTATIONS} adaptations"
        )

    def _refused(self, named: list[str]) -> str | None:
        """The parameter a refusal is taken to be about: the one it names, or the least
        missed of several it names that may all be adapted (the next call tells whether
        that was enough); None when that cannot be told."""
        if len(named) == 1 or (named and all(name in self.adaptable for name in named)):
            return named[0]
        return None

    def _adaptation(self, parameter: str | None, params: GenerateParams) -> str | None:
        if parameter is None or parameter not in self.adaptable or parameter in params.extra:
            return None
        if parameter in self.adapted or f"renamed to {parameter}" in self.adapted.values():
            return None  # changed once, or renamed into: going round in circles
        target = self.adaptable[parameter]
        return "dropped" if target is None else f"renamed to {target}"
