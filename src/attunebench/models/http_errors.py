"""How HTTP failures map onto `ProviderError`: which statuses are worth retrying, and for how long.

Shared by every provider that talks HTTP, so 429 means the same thing to all of them.
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime

from attunebench.models.base import ProviderError

# Among client errors only a rate limit is worth trying again: any other 4xx (a wrong path's
# 404, a bad request, a refused key) answers the same way every time, so it is permanent.
# Any 5xx is the server's trouble and may pass. A client-side timeout is retried, but as a
# timeout, not as a status.
RETRYABLE_STATUSES = frozenset({429})


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or status >= 500


def retry_after_seconds(value: str | None) -> float | None:
    """Parse a Retry-After header: delay seconds or an HTTP date (RFC 9110, 10.2.3).

    >>> retry_after_seconds("2.5")
    2.5
    >>> retry_after_seconds("soon") is None
    True
    """
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def status_error(status: int, body: str, retry_after: str | None = None) -> ProviderError:
    """The ProviderError for an HTTP error response, keeping the start of its body."""
    return ProviderError(
        f"HTTP {status}: {body[:500]}",
        retryable=is_retryable_status(status),
        status=status,
        retry_after_s=retry_after_seconds(retry_after),
    )
