"""Migrations make the schema (and match the models); SQLite runs as configured; CLI commands."""

from __future__ import annotations

import json
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from collect_harness import POOL, Walker, invite
from fastapi.testclient import TestClient
from sqlalchemy import inspect
from typer.testing import CliRunner

from attunebench.cli import app as cli
from attunebench.collect.db import check_schema, make_engine, migrate
from attunebench.collect.models import Base
from attunebench.data.validate import validate_file

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "study.toml"


def test_migrations_create_exactly_the_models(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        migrate(engine)
        migrate(engine)  # idempotent
        check_schema(engine)
        with engine.connect() as connection:
            assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
        tables = set(inspect(engine).get_table_names())
        assert {"participants", "turns", "replies", "study", "alembic_version"} <= tables
    finally:
        engine.dispose()


def test_sqlite_runs_in_wal_with_foreign_keys(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()


def test_cli_init_invite_status_export(tmp_path: Path, database_url: str) -> None:
    runner = CliRunner()
    env = {"PW": "a long enough password"}
    result = runner.invoke(cli, ["collect", "init", "--study", str(EXAMPLE), "--db", database_url,
                                 "--admin-password-env", "PW"], env=env)  # fmt: skip
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["collect", "invite", "--db", database_url, "-n", "2"])
    assert result.exit_code == 0 and len(result.output.splitlines()) == 2
    status = runner.invoke(cli, ["collect", "status", "--db", database_url])
    assert status.exit_code == 0 and "invited 2" in status.output
    out = tmp_path / "out.jsonl"
    empty = runner.invoke(cli, ["collect", "export", "--db", database_url, "--out", str(out)])
    assert empty.exit_code == 0 and out.read_text() == ""


def test_cli_export_of_a_session_validates(
    client: TestClient, database_url: str, tmp_path: Path
) -> None:
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    walker.traits()
    walker.message("Just one turn so far.")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["collect", "export", "--db", database_url, "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = validate_file(out)
    assert report.ok and (report.conversations, report.turns, report.responses) == (1, 1, 2)
    assert report.summary() in result.output
    record = json.loads(out.read_text())
    assert record["context"]["labels"]["status"] == "incomplete"
    assert {r["model"] for r in record["turns"][0]["responses"]} <= set(POOL)


def test_cli_errors_are_clear(tmp_path: Path) -> None:
    runner = CliRunner()
    url = f"sqlite:///{tmp_path / 'none.db'}"
    result = runner.invoke(cli, ["collect", "status", "--db", url])
    assert result.exit_code == 1 and "collect init" in result.output
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace("min = 2 ", "min = 9 "), encoding="utf-8")
    result = runner.invoke(cli, ["collect", "init", "--study", str(bad), "--db", url])
    assert result.exit_code == 1 and "turns.min (9) is above turns.max" in result.output
    result = runner.invoke(cli, ["collect", "init", "--study", str(EXAMPLE), "--db", url,
                                 "--admin-password-env", "UNSET_VAR_X"])  # fmt: skip
    assert result.exit_code == 1 and "UNSET_VAR_X" in result.output
