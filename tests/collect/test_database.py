"""Migrations make the schema (and match the models) and carry old data forward; SQLite runs as
configured and is private; CLI commands, and their one-line errors."""

from __future__ import annotations

import ast
import json
import os
import stat
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from collect_harness import POOL, Walker, invite
from fastapi.testclient import TestClient
from sqlalchemy import inspect, text
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.collect import migrations
from attunebench.collect.db import alembic_config, check_schema, make_engine, migrate
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


def _top_imports(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." if node.level else (node.module or "").split(".")[0])
    return found


def test_a_migration_is_frozen_history_that_imports_nothing_of_the_package() -> None:
    """A migration must make the same schema however the package changes later: it reads no
    module of ours (a helper shared by two migrations would rewrite both histories)."""
    versions = sorted((Path(migrations.__file__).parent / "versions").glob("0*.py"))
    assert len(versions) >= 5
    allowed = {"__future__", "alembic", "sqlalchemy", "secrets"}
    for path in versions:
        imported = _top_imports(ast.parse(path.read_text(encoding="utf-8")))
        assert imported <= allowed, f"{path.name} imports {sorted(imported - allowed)}"
    shared = ast.parse("from attunebench.collect.models import Base\nfrom . import helpers")
    assert _top_imports(shared) - allowed == {"attunebench", "."}


def test_sqlite_runs_in_wal_with_foreign_keys(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()


def test_cli_init_invite_status_export(tmp_path: Path, database_url: str) -> None:
    runner = CliRunner()
    env = {"PW": "a long enough password"}
    result = runner.invoke(
        app,
        [
            "collect",
            "init",
            "--study",
            str(EXAMPLE),
            "--db",
            database_url,
            "--admin-password-env",
            "PW",
        ],
        env=env,
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["collect", "invite", "--db", database_url, "-n", "2"])
    assert result.exit_code == 0 and len(result.output.splitlines()) == 2
    status = runner.invoke(app, ["collect", "status", "--db", database_url])
    assert status.exit_code == 0 and "invited 2" in status.output
    out = tmp_path / "out.jsonl"
    empty = runner.invoke(app, ["collect", "export", "--db", database_url, "--out", str(out)])
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
    result = CliRunner().invoke(app, ["collect", "export", "--db", database_url, "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = validate_file(out)
    assert report.ok and (report.conversations, report.turns, report.responses) == (1, 1, 2)
    assert report.summary() in result.output
    record = json.loads(out.read_text())
    assert record["context"]["labels"]["status"] == "incomplete"
    assert {r["model"] for r in record["turns"][0]["responses"]} <= set(POOL)


def test_migration_carries_answers_given_before_it(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        connection.execute(
            text(
                "INSERT INTO participants (id, public_id, token_hash, created_at) "
                "VALUES (1, 'p1', 'h1', '2026-01-01'), (2, 'p2', 'h2', '2026-01-01')"
            )
        )
        for n, choice in enumerate(("B", "tie")):
            connection.execute(
                text(
                    'INSERT INTO turns (participant_id, "index", user_text, state, safety_notice, '
                    "created_at, choice, wanted) "
                    "VALUES (1, :n, 'hi', '{}', 0, '2026-01-01', :c, 'more')"
                ),
                {"n": n, "c": choice},
            )
    migrate(engine)
    with engine.connect() as connection:
        rows = connection.execute(
            text('SELECT choice, comment, continued, continued_by FROM turns ORDER BY "index"')
        ).all()
        codes = connection.execute(text("SELECT deletion_code, enrolment FROM participants")).all()
    engine.dispose()
    # A tie went on with Reply A before: neither picked nor drawn.
    assert [tuple(r) for r in rows] == [("B", "more", "B", "pick"), ("tie", "more", "A", None)]
    assert len({c for c, _ in codes}) == 2 and {e for _, e in codes} == {"invitation"}


def test_the_sqlite_file_is_private_and_never_made_by_mistake(tmp_path: Path) -> None:
    runner = CliRunner()
    path = tmp_path / "study.db"
    url = f"sqlite:///{path}"
    typo = tmp_path / "stduy.db"
    result = runner.invoke(app, ["collect", "status", "--db", f"sqlite:///{typo}"])
    assert result.exit_code == 1 and f"no database at {typo}" in result.output
    assert not typo.exists()
    result = runner.invoke(app, ["collect", "init", "--study", str(EXAMPLE), "--db", url])
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for name in ("invite", "status"):
        assert runner.invoke(app, ["collect", name, "--db", url]).exit_code == 0
    for sidecar in tmp_path.glob("study.db-*"):
        assert stat.S_IMODE(sidecar.stat().st_mode) == 0o600, sidecar
    out = tmp_path / "data.jsonl"
    result = runner.invoke(app, ["collect", "export", "--db", url, "--out", str(out)])
    assert result.exit_code == 0 and stat.S_IMODE(out.stat().st_mode) == 0o644


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("not a url", "is not a database URL"),
        ("postgresql://user:secret@127.0.0.1:1/db", "cannot open database postgresql://user:***@"),
        ("sqlite:////no/such/folder/x.db", "no database at /no/such/folder/x.db"),
    ],
)
def test_a_bad_db_is_one_line(url: str, expected: str) -> None:
    for command_ in (["status"], ["invite"], ["export", "--out", os.devnull]):
        result = CliRunner().invoke(app, ["collect", *command_, "--db", url])
        assert result.exit_code == 1 and expected in result.output, result.output
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
        assert "secret" not in result.output


def _study_with(tmp_path: Path, options: str) -> Path:
    source = EXAMPLE.read_text(encoding="utf-8").replace(
        'spec = "mock/curious-asker"',
        f'spec = "openai/served-model"\noptions = {options}\n'
        '[[models]]\nspec = "mock/curious-asker"',
        1,
    )
    path = tmp_path / "study.toml"
    path.write_text(source, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ('{ base_url = "http://127.0.0.1:1/v1", key_env = "K" }', "unknown option 'key_env'"),
        (
            '{ base_url = "https://api.example/v1", api_key_env = "UNSET_KEY_VARIABLE" }',
            "environment variable UNSET_KEY_VARIABLE is not set",
        ),
        ('{ base_url = "http://127.0.0.1:1/v1" }', "cannot reach http://127.0.0.1:1/v1"),
    ],
)
def test_init_checks_the_pool(tmp_path: Path, options: str, expected: str) -> None:
    study = _study_with(tmp_path, options)
    url = f"sqlite:///{tmp_path / 'x.db'}"
    result = CliRunner().invoke(app, ["collect", "init", "--study", str(study), "--db", url])
    assert result.exit_code == 1 and expected in result.output, result.output
    assert f"{study}: models.2 (openai/served-model): " in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "x.db").exists()


def test_cli_errors_are_clear(tmp_path: Path) -> None:
    runner = CliRunner()
    url = f"sqlite:///{tmp_path / 'none.db'}"
    result = runner.invoke(app, ["collect", "status", "--db", url])
    assert result.exit_code == 1 and "collect init" in result.output
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace("min = 2 ", "min = 9 "), encoding="utf-8")
    result = runner.invoke(app, ["collect", "init", "--study", str(bad), "--db", url])
    assert result.exit_code == 1 and "turns.min (9) is above turns.max" in result.output
    result = runner.invoke(
        app,
        [
            "collect",
            "init",
            "--study",
            str(EXAMPLE),
            "--db",
            url,
            "--admin-password-env",
            "UNSET_VAR_X",
        ],
    )
    assert result.exit_code == 1 and "UNSET_VAR_X" in result.output
