"""A base URL that serves web pages, not the API, is named as such before the run, in one line
and with no retries; any server's error body is one line in a failure's message."""

from __future__ import annotations

import pytest

from attunebench.models import GenerateParams, ProviderConfigError, ProviderError
from attunebench.models.http_errors import status_error
from attunebench.models.openai_compat import OpenAICompatProvider
from testkit.web_page import PAGE, WebPageServer


@pytest.mark.parametrize(
    ("path", "hint"),
    [
        ("/v1", "(is it the model server's own address and port?)"),
        ("", "(is the base URL right? It usually ends in /v1)"),  # only where it does not
    ],
)
async def test_a_models_list_answered_with_a_web_page_stops_the_check(path: str, hint: str) -> None:
    server = WebPageServer(501)
    base = (await server.start()).removesuffix("/v1") + path
    provider = OpenAICompatProvider("m", base_url=base)
    try:
        with pytest.raises(ProviderConfigError) as raised:
            await provider.check()
    finally:
        await provider.aclose()
        await server.stop()
    message = str(raised.value)
    assert message == (
        f"{base} is not an OpenAI-compatible server: its /models answered HTML {hint}"
    )


@pytest.mark.parametrize("status", [404, 405, 501])
async def test_a_first_call_answered_by_a_web_server_stops_the_preflight(status: int) -> None:
    server = WebPageServer(status, models_json=True)  # a gateway listing models, serving no chat
    base = await server.start()
    provider = OpenAICompatProvider("m", base_url=base)
    try:
        await provider.check()  # its /models is JSON: nothing to say yet
        with pytest.raises(ProviderConfigError) as raised:
            await provider.probe(GenerateParams())
    finally:
        await provider.aclose()
        await server.stop()
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"openai/m: {base} is not an OpenAI-compatible server")
    assert f"answered the first call with HTTP {status}: an HTML page ({status} " in message
    assert server.calls == 2  # the list and one call: not retried


async def test_an_api_refusing_a_model_name_is_not_called_a_web_server() -> None:
    refused = status_error(
        404, '{"error": {"message": "The model `m` does not exist", "type": "invalid_request"}}'
    )
    provider = OpenAICompatProvider("m", base_url="http://127.0.0.1:9/v1")
    assert provider._not_an_api(refused) is refused  # the vendor's own words stand
    page = status_error(404, PAGE.format(status=404, reason="Not Found", path="/v1/x"))
    assert isinstance(provider._not_an_api(page), ProviderConfigError)
    await provider.aclose()


def test_an_error_page_is_one_line_in_a_failure() -> None:
    page = PAGE.format(status=502, reason="Bad Gateway", path="/v1/chat/completions")
    assert page.count("\n") > 10
    error = status_error(502, page)
    assert isinstance(error, ProviderError) and error.retryable
    assert str(error) == "HTTP 502: an HTML page (502 Bad Gateway)"
    pretty = status_error(400, '{\n  "error": {\n    "message": "bad"\n  }\n}')
    assert str(pretty) == 'HTTP 400: { "error": { "message": "bad" } }' and pretty.said == "bad"
