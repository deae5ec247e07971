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

    database_url: str = DEFAULT_DATABASE_URL  # sqlite:///file.db or postgresql://user:pw@host/db
    # Signs cookies and CSRF tokens; by default the random key `init` stored.
    secret_key: SecretStr | None = None
    # The admin cookie over HTTPS only (browsers treat http://127.0.0.1 and localhost as secure).
    cookie_secure: bool = True
    session_hours: float = Field(default=8, gt=0, le=24 * 30)
    login_attempts_per_minute: int = Field(default=10, ge=1)
    base_url: str = ""  # the public address in invitation links ('' = this request's)
    max_body_bytes: int = Field(default=256 * 1024, ge=1024)
    # Reverse proxies trusted to name the client (docs/collecting.md, "3. Serve"); '' trusts none.
    forwarded_allow_ips: str = ""
