"""How HTTP failures map onto `ProviderError`: which statuses are worth retrying, for how long,
and what the error body's structured fields say.

A 429 whose code or type says the account has no money left is no rate limit: it is
permanent. A body that is no vendor's (an HTML error page) is said in one line (`body_line`),
so a summary of failures stays one line each."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from attunebench.models.base import ProviderError

# Among client errors only a rate limit (429), a request timeout (408) and a conflict (409, a
# lock held elsewhere) are worth trying again, as both vendors' SDKs do: any other 4xx (a wrong
# path's 404, a bad request, a refused key) answers the same way every time, so it is
# permanent. Any 5xx is the server's trouble and may pass. A client-side timeout is retried,
# but as a timeout, not as a status.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
# Codes and types that mean the account cannot pay: no retry can mend them.
BILLING = frozenset(
    {
        "insufficient_quota",
        "billing_error",
        "billing_hard_limit_reached",
        "billing_not_active",
        "account_deactivated",
    }
)


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_HTML_START = ("<!doctype html", "<html", "<head", "<body", "<?xml")


def looks_like_html(text: str) -> bool:
    """Whether a body is a web page (or XML) rather than JSON or plain text.

    >>> looks_like_html("  <!DOCTYPE html><html>"), looks_like_html('{"error": {}}')
    (True, False)
    """
    return text.lstrip()[:100].lower().startswith(_HTML_START)


def body_line(text: str, limit: int = 500) -> str:
    """A response body in one line: a web page by its title, anything else with its white
    space collapsed, cut at `limit` characters.

    >>> body_line("<html>\\n<head><title>501 Not\\n Implemented</title></head>\\n</html>")
    'an HTML page (501 Not Implemented)'
    >>> body_line('{"error":\\n  {"message": "no"}}')
    '{"error": {"message": "no"}}'
    """
    if looks_like_html(text):
        title = _TITLE.search(text)
        named = " ".join(title.group(1).split()) if title else ""
        return f"an HTML page ({named[:200]})" if named else "an HTML page"
    return " ".join(text.split())[:limit]


def retry_after(headers: Mapping[str, str]) -> float | None:
    """How long the server asks to wait: `retry-after-ms` (both vendors send it, finer than
    whole seconds) before `retry-after`, in seconds or as an HTTP date (RFC 9110, 10.2.3).

    >>> retry_after({"retry-after-ms": "250", "retry-after": "1"}), retry_after({"x": "y"})
    (0.25, None)
    >>> retry_after({"Retry-After": "soon"}) is None
    True
    """
    lower = {name.lower(): value for name, value in headers.items()}
    with contextlib.suppress(KeyError, ValueError):
        return max(0.0, float(lower["retry-after-ms"]) / 1000)
    value = lower.get("retry-after")
    if not value:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_fields(body: Any) -> dict[str, str | None]:
    """`kind`, `code`, `param` and `said` (the message) from a vendor's error body.

    >>> error_fields({"error": {"message": "m", "type": "t", "param": "top_p", "code": None}})
    {'kind': 't', 'code': None, 'param': 'top_p', 'said': 'm'}
    """
    if isinstance(body, (str, bytes)):
        try:
            body = json.loads(body)
        except ValueError:
            body = None
    inner = body.get("error") if isinstance(body, dict) else None
    if not isinstance(inner, dict):
        inner = {}
    named = {"kind": "type", "code": "code", "param": "param", "said": "message"}
    return {
        name: None if inner.get(key) is None else str(inner[key]) for name, key in named.items()
    }


def status_error(
    status: int, body: str | Any, headers: Mapping[str, str] | None = None
) -> ProviderError:
    """The ProviderError for an HTTP error response, with its structured fields, the start
    of its body, and the wait its headers ask for.

    >>> error = status_error(429, '{"error": {"type": "rate_limit"}}', {"Retry-After": "2.5"})
    >>> error.retryable, error.kind, error.retry_after_s
    (True, 'rate_limit', 2.5)
    """
    fields = error_fields(body)
    kept = {name.lower(): value for name, value in (headers or {}).items()}
    billing = fields["code"] in BILLING or fields["kind"] in BILLING
    text = body if isinstance(body, str) else json.dumps(body)
    return ProviderError(
        f"HTTP {status}: {body_line(text)}",
        retryable=(status in RETRYABLE_STATUSES or status >= 500) and not billing,
        status=status,
        retry_after_s=retry_after(kept),
        kind=fields["kind"],
        code=fields["code"],
        param=fields["param"],
        said=fields["said"],
        headers=kept,
    )
