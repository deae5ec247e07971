"""Fixtures for the collection app: a TestClient on an initialised study, in the fresh database
that tests/conftest.py gives each test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from collect_harness import ADMIN_PASSWORD, study_data
from fastapi.testclient import TestClient

from attunebench.collect.bootstrap import init_database
from attunebench.collect.settings import Settings
from attunebench.collect.study import Study, parse_study


@pytest.fixture
def study() -> Study:
    return parse_study(study_data())


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
