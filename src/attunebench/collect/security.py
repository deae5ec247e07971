"""Passwords, tokens, CSRF, signed cookies, rate limits and response headers.

- Passwords: Argon2id (argon2-cffi), never stored in the clear.
- Participant links carry 256 random bits (`secrets.token_urlsafe`); only their SHA-256 is
  stored, and an unknown token gets the same answer as a malformed one, so links cannot be
  enumerated or read back from the database.
- CSRF: every form carries an HMAC of what it acts for (the participant's token, or the admin
  session, or for the login form a random cookie), checked in constant time.
- Admin sessions: an itsdangerous-signed, expiring cookie naming a server-side session row, so
  logging out really ends it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import deque

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from itsdangerous import BadSignature, URLSafeTimedSerializer

TOKEN_BYTES = 32
_hasher = PasswordHasher()


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(stored_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(stored_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def plausible_token(token: str) -> bool:
    """Cheap shape check before touching the database (token_urlsafe(32) is 43 characters)."""
    return 40 <= len(token) <= 64 and all(c.isalnum() or c in "-_" for c in token)


class Signer:
    """CSRF tokens and signed cookie values under one secret."""

    def __init__(self, secret: str) -> None:
        self._key = hashlib.sha256(("attunebench-collect:" + secret).encode()).digest()
        self._cookies = URLSafeTimedSerializer(secret, salt="attunebench-admin-session")

    def csrf(self, purpose: str, subject: str) -> str:
        message = f"{purpose}\x00{subject}".encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def check_csrf(self, purpose: str, subject: str, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(self.csrf(purpose, subject), given)

    def sign_cookie(self, value: str) -> str:
        return self._cookies.dumps(value)

    def read_cookie(self, signed: str, max_age_s: int) -> str | None:
        try:
            value = self._cookies.loads(signed, max_age=max_age_s)
        except BadSignature:
            return None
        return value if isinstance(value, str) else None


class RateLimiter:
    """At most `limit` events per key in any `window_s` seconds (sliding window, in memory).

    Limits are per app process: with several workers each enforces its own share.
    """

    def __init__(self, limit: int, window_s: float = 60.0, max_keys: int = 100_000) -> None:
        self.limit = limit
        self.window_s = window_s
        self._max_keys = max_keys
        self._events: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        now = time.monotonic()
        with self._lock:
            events = self._events.get(key)
            if events is None:
                if len(self._events) >= self._max_keys:
                    self._forget_idle(now)
                events = self._events[key] = deque()
            while events and now - events[0] > self.window_s:
                events.popleft()
            if len(events) >= self.limit:
                return False
            events.append(now)
            return True

    def _forget_idle(self, now: float) -> None:
        idle = [k for k, ev in self._events.items() if not ev or now - ev[-1] > self.window_s]
        for key in idle:
            del self._events[key]


CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    )
)

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    # Participant links are credentials: never leak them to another site in a Referer.
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
)
