"""Fixtures for the collection app: a fresh database per test (SQLite, and PostgreSQL when
ATTUNEBENCH_TEST_POSTGRES_URL is set) and a TestClient on an initialised study."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from collect_harness import ADMIN_PASSWORD, study_data
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from attunebench.collect.bootstrap import init_database
from attunebench.collect.settings import Settings
from attunebench.collect.study import Study, parse_study

POSTGRES_ENV = "ATTUNEBENCH_TEST_POSTGRES_URL"


@pytest.fixture
def study() -> Study:
    return parse_study(study_data())


def _postgres_url() -> Iterator[str]:
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_ENV} is not set")
    schema = "t_" + secrets.token_hex(6)
    admin = create_engine(base)
    with admin.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{base}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as connection:
            connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'collect.db'}"
    else:
        yield from _postgres_url()


@pytest.fixture
def make_client(database_url: str) -> Iterator[Any]:
    """Initialise the database for a study and open a TestClient on it (lifespan included)."""
    clients: list[TestClient] = []

    def make(study: Study | None = None, **settings: Any) -> TestClient:
        init_database(database_url, study or parse_study(study_data()), "# toml", ADMIN_PASSWORD)
        app_settings = Settings(database_url=database_url, **settings)
        from attunebench.collect.app import create_app

        client = TestClient(create_app(app_settings), base_url="https://testserver")
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: Any) -> TestClient:
    return make_client()  # type: ignore[no-any-return]


