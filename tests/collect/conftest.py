"""Fixtures for the collection app: a TestClient on an initialised study, in the fresh database
that tests/conftest.py gives each test, and the app served on a local port for a browser or the
simulator. Passwords are hashed with Argon2id at its cheapest settings here."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from argon2 import PasswordHasher
from collect_harness import ADMIN_PASSWORD, Serve, study_data
from fastapi.testclient import TestClient

from attunebench.collect import security
from attunebench.collect.bootstrap import init_database
from attunebench.collect.settings import Settings
from attunebench.collect.study import Study, parse_study


@pytest.fixture(autouse=True)
def cheap_password_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Argon2id with one pass over 8 KiB: the app's settings take ~0.14 s per hash or check,
    paid on every database a test makes and every admin login. Passwords are still hashed and
    checked through the same calls; only the work factor differs."""
    cheap = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    monkeypatch.setattr(security, "_hasher", cheap)


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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """Start the app for a study on a free local port; gives (base URL, database URL)."""
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(study: Study) -> tuple[str, str]:
        url = f"sqlite:///{tmp_path / f'served-{len(servers)}.db'}"
        init_database(url, study, "# toml", ADMIN_PASSWORD)
        port = _free_port()
        from attunebench.collect.app import create_app

        app = create_app(Settings(database_url=url))
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        servers.append((server, thread))
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}", url

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=10)
