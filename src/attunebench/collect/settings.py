"""How one deployment of the collection app runs (the study itself lives in the database).

Every field can be set from the environment as `ATTUNEBENCH_COLLECT_<FIELD>`.
"""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from attunebench.collect import DEFAULT_DATABASE_URL


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ATTUNEBENCH_COLLECT_", frozen=True, extra="forbid"
    )

    database_url: str = Field(
        default=DEFAULT_DATABASE_URL,
        description="SQLAlchemy URL: sqlite:///file.db or postgresql+psycopg://user:pw@host/db.",
    )
    secret_key: SecretStr | None = Field(
        default=None,
        description="Signs cookies and CSRF tokens; by default the random key `init` stored.",
    )
    cookie_secure: bool = Field(
        default=True,
        description="Send the admin cookie over HTTPS only (browsers treat "
        "http://127.0.0.1 and localhost as secure).",
    )
    session_hours: float = Field(default=8, gt=0, le=24 * 30)
    login_attempts_per_minute: int = Field(default=10, ge=1)
    base_url: str = Field(
        default="", description="Public address used in invitation links ('' = this request's)."
    )
    max_body_bytes: int = Field(default=256 * 1024, ge=1024)
    forwarded_allow_ips: str = Field(
        default="",
        description="Reverse proxies trusted to name the client: comma-separated addresses or "
        "networks (10.0.0.0/8), or '*'. A request from one of them is treated as coming from "
        "the address it forwards in X-Forwarded-For (rate limits, logs) and by the scheme in "
        "X-Forwarded-Proto. '' (the default): the socket's address, whatever the headers say.",
    )
