"""Passwords, tokens, CSRF, signed cookies and response headers.

Passwords are hashed with Argon2id. Participant links carry 256 random bits and only their
SHA-256 is stored, so links cannot be read back from the database, and an unknown token is
answered as a malformed one, so they cannot be enumerated. Deletion codes name a participant
to the researcher and open nothing. Every form carries an HMAC of what it acts for, checked in
constant time; an admin cookie names a server-side session row, so logging out really ends it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

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


# Crockford's base 32: no I, L, O or U, so a code read aloud or copied by hand survives.
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_CODE_READS = str.maketrans("ILOU", "1101")


def deletion_code() -> str:
    """A participant's deletion code: 12 characters (60 random bits) in groups of four."""
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(12))
    return f"{raw[:4]}-{raw[4:8]}-{raw[8:]}"


def normalise_code(text: str) -> str | None:
    """A deletion code as typed (any case, spaces or dashes, O for 0), or None if it is not one.

    >>> normalise_code(" abcd efgh-jkmo ")
    'ABCD-EFGH-JKM0'
    >>> normalise_code("hello") is None
    True
    """
    raw = re.sub(r"[\s-]", "", text).upper().translate(_CODE_READS)
    if len(raw) != 12 or any(c not in CODE_ALPHABET for c in raw):
        return None
    return f"{raw[:4]}-{raw[4:8]}-{raw[8:]}"


def token_from_link(text: str) -> str | None:
    """The invitation token in a pasted participant link (or a bare token).

    >>> token_from_link("https://study.example/p/" + "a" * 43 + "/support?x=1")
    'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'
    """
    text = text.strip()
    found = re.search(r"/p/([A-Za-z0-9_-]+)", text)
    token = found.group(1) if found else text
    return token if plausible_token(token) else None


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
