"""The pre-flight call: one real call per model (and per body: the choice body too), with its
own parameters, before anything is planned.

A server that refuses a parameter answers the same to every call of the run. A parameter the
provider added on its own is adapted (dropped or renamed, recorded in run.json's `adapted`)
and tried again; one the models file asked for, or a refusal of the call itself, stops the run
with one line naming the fix. Which parameter a refusal names is read from the error's fields
(OpenAI's `error.param`), else from those its message writes; nothing is guessed. A first call
answered 404, 405 or 501 with no vendor's error body (`NOT_AN_API`) stops the run too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any, Final

from attunebench.models.base import GenerateParams, Message, Provider, ProviderError
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
    """A model's parameters as its calls send them (JSON mode unless set), with a small budget."""
    update: dict[str, Any] = {"max_tokens": min(params.max_tokens, PROBE_MAX_TOKENS)}
    if "json_mode" not in params.model_fields_set:
        update["json_mode"] = True
    return params.model_copy(update=update)


def adapt(body: dict[str, Any], adapted: Mapping[str, str]) -> dict[str, Any]:
    """`body` with the pre-flight's drops and renames applied."""
    for name, action in adapted.items():
        if name in body and (action == "dropped" or action.startswith("renamed to ")):
            value = body.pop(name)
            if action.startswith("renamed to "):
                body[action.removeprefix("renamed to ")] = value
    return body


def named_parameters(
    error: ProviderError, sent: Collection[str], adaptable: Mapping[str, str | None] = ADAPTABLE
) -> list[str]:
    """The top-level fields of the request `sent` that a refusal names, most likely first: OpenAI's
    `error.param` where given, else the fields its message writes as fields, else in prose.

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
    """The line that stops the run: the provider's message verbatim, what was sent, and a fix only
    for a `parameter` the refusal itself named."""
    if error.status is None:  # refused before it was sent: the provider's own message
        return ProviderConfigError(f"{spec}: {error}")
    said, what = " ".join((error.said or str(error)).splitlines()), sent_line(sent)
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


class Adapting(Provider):
    """A provider whose requests the pre-flight may adapt; `adapted` maps each changed parameter to
    what was done (`dropped`, `renamed to max_completion_tokens`)."""

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
        fixes: Mapping[str, str],
        params: GenerateParams,
    ) -> None:
        """Send `build()` until it is accepted, adapting what may be; else stop the run."""
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
                        self.spec, error, alone, fixes=fixes, params=params, sent=sent
                    ) from None
                self._adapted[parameter] = action
        raise ProviderConfigError(
            f"{self.spec} refused the pre-flight call after {MAX_ADAPTATIONS} adaptations"
        )

    def _refused(self, named: list[str]) -> str | None:
        """The parameter a refusal is about: the one it names, or the least missed adaptable one."""
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
