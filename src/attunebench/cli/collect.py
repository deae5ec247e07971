"""`attunebench collect ...`: set up, serve, invite, follow and export a collection study."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from attunebench.collect.settings import DEFAULT_DATABASE_URL

if TYPE_CHECKING:
    from attunebench.collect.db import Database

app = typer.Typer(help="Collect annotated conversations with anonymised models.",
                  no_args_is_help=True)  # fmt: skip
console = Console()
err = Console(stderr=True)

DbOption = Annotated[
    str,
    typer.Option("--db", envvar="ATTUNEBENCH_COLLECT_DATABASE_URL",
                 help="SQLAlchemy URL: sqlite:///file.db or postgresql+psycopg://..."),
]  # fmt: skip


def _fail(message: str) -> typer.Exit:
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(1)


def _open(db_url: str) -> Database:
    from attunebench.collect.bootstrap import read_stored
    from attunebench.collect.db import Database, SchemaError, make_engine

    database = Database(make_engine(db_url))
    try:
        read_stored(database)
    except SchemaError as error:
        database.dispose()
        raise _fail(str(error)) from None
    return database


def _password(env_var: str | None) -> str | None:
    if env_var is None:
        return None
    value = os.environ.get(env_var)
    if not value:
        raise _fail(f"environment variable {env_var} is not set (or empty)")
    if len(value) < 8:
        raise _fail(f"the admin password in {env_var} must have at least 8 characters")
    return value


@app.command()
def init(
    study: Annotated[Path, typer.Option("--study", help="The study TOML file.")],
    db: DbOption = DEFAULT_DATABASE_URL,
    admin_password_env: Annotated[
        str | None, typer.Option(help="Read the admin password from this environment variable.")
    ] = None,
) -> None:
    """Create or upgrade the database (Alembic), store the study, set the admin password."""
    from attunebench.collect.bootstrap import init_database
    from attunebench.collect.crud import StudyMismatchError
    from attunebench.collect.study import StudyError, load_study

    try:
        parsed = load_study(study)
    except StudyError as error:
        raise _fail(str(error)) from None
    try:
        stored = init_database(db, parsed, study.read_text(encoding="utf-8"),
                               _password(admin_password_env))  # fmt: skip
    except StudyMismatchError as error:
        raise _fail(str(error)) from None
    console.print(f"study [bold]{stored.study.id}[/bold] stored in {db}", highlight=False)
    if not stored.has_admin_password:
        err.print("warning: no admin password set; pass --admin-password-env to enable /admin")


@app.command()
def serve(
    db: DbOption = DEFAULT_DATABASE_URL,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    workers: Annotated[
        int, typer.Option(min=1, max=64, help="App processes (PostgreSQL only).")
    ] = 1,
) -> None:
    """Serve the participant pages and the admin pages."""
    import uvicorn

    database = _open(db)
    sqlite = database.is_sqlite
    database.dispose()
    if workers > 1 and sqlite:
        # One SQLite file has one writer: processes would queue on its lock by polling.
        raise _fail("several workers need PostgreSQL; SQLite serves with one")
    # Each worker process builds its own app from the environment (create_app reads Settings).
    os.environ["ATTUNEBENCH_COLLECT_DATABASE_URL"] = db
    uvicorn.run("attunebench.collect.app:create_app", factory=True, host=host, port=port,
                workers=workers, log_level="info")  # fmt: skip


@app.command()
def invite(
    db: DbOption = DEFAULT_DATABASE_URL,
    count: Annotated[int, typer.Option("--count", "-n", min=1, max=10_000)] = 1,
    base_url: Annotated[str, typer.Option(help="Where the app is reachable.")] = (
        "http://127.0.0.1:8000"
    ),
) -> None:
    """Create invitation links and print them, one a line (they cannot be shown again)."""
    from attunebench.collect import crud

    database = _open(db)
    try:
        with database.write() as session:
            tokens = crud.create_invitations(session, count)
    finally:
        database.dispose()
    for token in tokens:
        print(f"{base_url.rstrip('/')}/p/{token}")


@app.command()
def export(
    out: Annotated[Path, typer.Option("--out", help="The JSON Lines file to write.")],
    db: DbOption = DEFAULT_DATABASE_URL,
    finished_only: Annotated[bool, typer.Option(help="Only finished conversations.")] = False,
) -> None:
    """Export the collected conversations as attunebench/v1, validated."""
    from attunebench.collect import crud
    from attunebench.collect.export import export_file

    database = _open(db)
    try:
        with database.read() as session:
            study = crud.load_stored_study(session)
            assert study is not None  # checked by _open
            _, report = export_file(out, crud.all_participants(session), study, finished_only)
    finally:
        database.dispose()
    if report is None:
        err.print(f"no conversations to export yet; wrote an empty {out}")
        return
    if not report.ok:
        for problem in report.problems:
            err.print(str(problem), highlight=False, markup=False)
        raise _fail(report.summary())
    console.print(report.summary(), highlight=False, soft_wrap=True)


@app.command()
def status(db: DbOption = DEFAULT_DATABASE_URL) -> None:
    """Progress: participants invited, consented, started, finished; per model and position."""
    from attunebench.collect import crud

    database = _open(db)
    try:
        with database.read() as session:
            study = crud.load_stored_study(session)
            assert study is not None
            progress = crud.progress(session, study)
    finally:
        database.dispose()
    console.print(
        f"study {progress.study}: invited {progress.invited}, consented {progress.consented}, "
        f"declined {progress.declined}, started {progress.started}, finished "
        f"{progress.finished}; turns {progress.turns} ({progress.picked_turns} picked), "
        f"{progress.flagged_replies} replies flagged",
        highlight=False,
        soft_wrap=True,
    )
    table = Table("model", "conversations", "replies shown", "chosen", "ties")
    for spec, counts in progress.per_model.items():
        table.add_row(spec, *(str(counts[k]) for k in ("conversations", "shown", "chosen", "ties")))
    console.print(table)
    picks = progress.per_position
    console.print(f"picks by position: A {picks['A']}, B {picks['B']}, tie {picks['tie']}")
