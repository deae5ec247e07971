"""`attunebench collect ...`: set up, serve, invite, follow, simulate and export a study.

Every failure an operator can cause (a bad study file, a pool model that cannot be made or
reached, a mistyped or unreachable --db) ends the command with one line naming what is wrong.
"""

from __future__ import annotations

import asyncio
import errno
import importlib.util
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from attunebench.cli.consoles import CommandConsole, command_group
from attunebench.cli.errors import fail, file_out, needs_extra, os_problem
from attunebench.cli.options import BaseUrl, DbUrl, Seed
from attunebench.collect import DEFAULT_DATABASE_URL

if TYPE_CHECKING:
    from attunebench.collect.bootstrap import Stored
    from attunebench.collect.db import Database
    from attunebench.collect.schemas import Progress

app = command_group("Collect annotated conversations with anonymised models.")
console = CommandConsole()
err = CommandConsole(stderr=True)

LOCAL = "http://127.0.0.1:8000"
# What the `collect` extra brings that every collect command imports.
WEB_STACK = ("sqlalchemy", "alembic", "fastapi", "uvicorn", "pydantic_settings", "httpx")


@app.callback()
def _web_stack() -> None:
    """Every collect command needs the web stack: say which extra brings it, not a traceback."""
    missing = [name for name in WEB_STACK if importlib.util.find_spec(name) is None]
    if missing:
        needs_extra("collect", f"attunebench collect (it imports {missing[0]})", code=1)


@contextmanager
def _opened(db_url: str) -> Iterator[tuple[Database, Stored]]:
    """The database and what init stored in it, disposed of on exit; one line and exit 1 if
    either is missing."""
    from attunebench.collect.bootstrap import read_stored
    from attunebench.collect.db import Database, DatabaseError, open_engine

    try:
        database = Database(open_engine(db_url))
    except DatabaseError as error:
        fail(str(error), 1)
    try:
        yield database, read_stored(database)
    except DatabaseError as error:
        fail(str(error), 1)
    finally:
        database.dispose()


def _password(env_var: str | None) -> str | None:
    if env_var is None:
        return None
    value = os.environ.get(env_var)
    if not value:
        fail(f"environment variable {env_var} is not set (or empty)", 1)
    if len(value) < 8:
        fail(f"the admin password in {env_var} must have at least 8 characters", 1)
    return value


@app.command()
def init(
    study: Annotated[Path, typer.Option("--study", help="The study TOML file.")],
    db: DbUrl = DEFAULT_DATABASE_URL,
    admin_password_env: Annotated[
        str | None, typer.Option(help="Read the admin password from this environment variable.")
    ] = None,
    check_models: Annotated[
        bool, typer.Option(help="Reach every pool model's server before storing the study.")
    ] = True,
    base_url: Annotated[
        str | None,
        typer.Option(help="Where the app is reachable (default: `collect serve` prints it)."),
    ] = None,
) -> None:
    """Check the study and its models, create or upgrade the database, store the study."""
    from attunebench.collect.bootstrap import init_database
    from attunebench.collect.crud import StudyMismatchError
    from attunebench.collect.db import DatabaseError
    from attunebench.collect.pool import PoolError, verify_pool
    from attunebench.collect.study import StudyError, load_study

    try:
        parsed = load_study(study)
        verify_pool(parsed, str(study), reach=check_models)
        password = _password(admin_password_env)
        stored = init_database(db, parsed, study.read_text(encoding="utf-8"), password)
    except (StudyError, PoolError, StudyMismatchError, DatabaseError) as error:
        fail(str(error), 1)
    console.print(f"study [bold]{stored.study.id}[/bold] stored in {db}", highlight=False)
    if stored.join_slug and base_url:
        console.print(f"open link: {base_url.rstrip('/')}/join/{stored.join_slug}")
    elif stored.join_slug:
        console.print(f"open link: /join/{stored.join_slug} (`collect serve` prints it in full)")
    if not stored.has_admin_password:
        err.print("warning: no admin password set; pass --admin-password-env to enable /admin")


@app.command()
def serve(
    db: DbUrl = DEFAULT_DATABASE_URL,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (1 to 65535).")] = 8000,
    workers: Annotated[
        int, typer.Option(min=1, max=64, help="App processes (PostgreSQL only).")
    ] = 1,
    forwarded_allow_ips: Annotated[
        str,
        typer.Option(
            help="Reverse proxies trusted to name the client in X-Forwarded-For, for the rate "
            "limits: comma-separated addresses or networks, or '*'. Default: none (the socket's "
            "address; also ATTUNEBENCH_COLLECT_FORWARDED_ALLOW_IPS)."
        ),
    ] = "",
) -> None:
    """Serve the participant pages and the admin pages."""
    if not 0 < port < 65536:
        fail(f"--port {port} is not a port: give one from 1 to 65535", 1)
    import uvicorn

    from attunebench.collect import crud
    from attunebench.collect.pool import PoolError, verify_pool

    with _opened(db) as (database, stored):
        if workers > 1 and database.is_sqlite:
            # One SQLite file has one writer: processes would queue on its lock by polling.
            fail("several workers need PostgreSQL; SQLite serves with one", 1)
        try:  # each worker makes the pool again; fail here, once, rather than in each of them
            verify_pool(stored.study, "the stored study", reach=False)
        except PoolError as error:
            fail(str(error), 1)
        _port_free(host, port)
        # Where `serve` listens, kept for `status` and `invite` to print links that work.
        with database.write() as session:
            crud.set_meta(session, crud.SERVED_AT, f"http://{host}:{port}")
    if stored.join_slug:
        console.print(f"open link: http://{host}:{port}/join/{stored.join_slug}", highlight=False)
    # Each worker process builds its own app from the environment (create_app reads Settings).
    os.environ["ATTUNEBENCH_COLLECT_DATABASE_URL"] = db
    if forwarded_allow_ips:
        os.environ["ATTUNEBENCH_COLLECT_FORWARDED_ALLOW_IPS"] = forwarded_allow_ips
    uvicorn.run(
        "attunebench.collect.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
        proxy_headers=False,  # the app trusts only the proxies its settings name
    )


def _served_at(database: Database, given: str | None) -> str:
    """The app's address: as given, else where `serve` last listened, else the default."""
    from attunebench.collect import crud

    if given:
        return given
    with database.read() as session:
        return crud.get_meta(session, crud.SERVED_AT) or LOCAL


def _port_free(host: str, port: int) -> None:
    """One line, before uvicorn starts, when the address is taken (not uvicorn's own log)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                fail(f"port {port} on {host} is in use; choose another --port", 1)
            fail(f"cannot listen on {host}:{port}: {error.strerror}", 1)


@app.command()
def invite(
    db: DbUrl = DEFAULT_DATABASE_URL,
    count: Annotated[int, typer.Option("--count", "-n", min=1, max=10_000)] = 1,
    base_url: BaseUrl = None,
) -> None:
    """Create invitation links and print them, one a line (they cannot be shown again)."""
    from attunebench.collect import crud

    with _opened(db) as (database, _):
        address = _served_at(database, base_url)
        with database.write() as session:
            tokens = crud.create_invitations(session, count)
    for token in tokens:
        print(f"{address.rstrip('/')}/p/{token}")


@app.command()
def export(
    out: Annotated[Path | None, typer.Option("--out", help="The JSON Lines file to write.")] = None,
    db: DbUrl = DEFAULT_DATABASE_URL,
    finished_only: Annotated[bool, typer.Option(help="Only finished conversations.")] = False,
    simulated: Annotated[
        bool, typer.Option(help="Include simulated participants (labelled simulated).")
    ] = True,
    payments: Annotated[
        Path | None,
        typer.Option(
            help="Also (or only) write the recruitment platform's payments list (CSV): each "
            "arrival's identifiers as the platform gave them, state and minutes.",
        ),
    ] = None,
) -> None:
    """Export the collected conversations as attunebench/v1, validated; with --payments, the
    list a researcher uploads to a recruitment platform to approve payments."""
    if out is None and payments is None:
        fail("give --out FILE (the conversations), --payments FILE, or both", 1)
    for path, option in ((out, "--out"), (payments, "--payments")):
        if path is not None:
            file_out(path, option)
    with _opened(db) as (database, stored):
        try:
            if payments is not None:
                _export_payments(database, stored, payments)
            if out is not None:
                _export_conversations(database, stored, out, finished_only, simulated)
        except OSError as error:  # a disk that filled up while a file was written
            fail(os_problem(error), 1)


def _export_payments(database: Database, stored: Stored, path: Path) -> None:
    from attunebench.collect.payments import payment_rows, write_payments
    from attunebench.collect.platform import PlatformKeys

    with database.read() as session:
        rows = payment_rows(session, stored.study, PlatformKeys(stored.secret))
    write_payments(path, rows)
    err.print(
        f"warning: {path} holds the platform's participant identifiers ({len(rows)} rows): "
        "keep it private and delete it once the payments are made",
        highlight=False,
        soft_wrap=True,
    )


def _export_conversations(
    database: Database, stored: Stored, out: Path, finished_only: bool, simulated: bool
) -> None:
    from attunebench.collect import crud
    from attunebench.collect.export import export_file

    with database.read() as session:
        participants = crud.all_participants(session)
        report = export_file(out, participants, stored.study, finished_only, simulated)
    if report is None:
        err.print(f"no conversations to export yet; wrote an empty {out}")
        return
    if not report.ok:
        for problem in report.problems:
            err.print(str(problem), highlight=False, markup=False)
        fail(report.summary(), 1)
    console.print(report.summary(), highlight=False, soft_wrap=True)


@app.command()
def status(db: DbUrl = DEFAULT_DATABASE_URL, base_url: BaseUrl = None) -> None:
    """Progress: enrolment, turns, picks per model and position, retest probes answered, and
    generation failures."""
    from attunebench.collect.progress import progress

    with _opened(db) as (database, stored):
        address = _served_at(database, base_url)
        with database.read() as session:
            now = progress(session, stored.study)
    cap = f" of {now.cap}" if now.cap else ""
    say = f"study {now.study}: invited {now.invited}, open link {now.open_enrolled}{cap}"
    say += f" ({now.simulated} simulated), consented {now.consented}, declined {now.declined}, "
    say += f"started {now.started}, finished {now.finished}; turns {now.turns} "
    say += f"({now.picked_turns} picked, {now.waiting_turns} waiting for replies), "
    say += f"{now.flagged_replies} replies flagged, {now.generation_failures} generation failures"
    probes = now.probes
    say += f"; retest probes {sum(probes.values())} ({probes['state']} emotion, "
    say += f"{probes['pick']} pick)"
    console.print(say, highlight=False, soft_wrap=True)
    table = Table("model", "conversations", "shown", "chosen", "ties", "flagged", "failed")
    for spec, m in now.per_model.items():
        counts = (m.conversations, m.shown, m.chosen, m.ties, m.flagged, m.failures)
        table.add_row(spec, *map(str, counts))
    console.print(table)
    for spec, m in now.per_model.items():
        if m.last_failure:
            console.print(f"last failure of {spec}: {m.last_failure}", highlight=False)
    picks = now.per_position
    console.print(f"picks by position: A {picks['A']}, B {picks['B']}, tie {picks['tie']}")
    _print_time(now)
    if stored.join_slug:
        console.print(f"open link: {address.rstrip('/')}/join/{stored.join_slug}")


def _print_time(now: Progress) -> None:
    """Each participant's state and minutes, and the spread of the minutes (what pay is set
    from)."""
    if now.participants:
        table = Table("participant", "enrolment", "state", "minutes", "turns", "careless")
        for p in now.participants:
            marked = ("careless: " if p.careless else "") + ", ".join(p.careless_signals)
            table.add_row(p.id, p.enrolment, p.state, f"{p.minutes:.1f}", str(p.turns), marked)
        console.print(table)
        console.print(f"{now.careless} participants marked careless", highlight=False)
    for what, spread in (
        ("finished participant", now.minutes_per_participant),
        ("turn", now.minutes_per_turn),
    ):
        if spread.median is None or spread.p90 is None:
            console.print(f"minutes per {what}: none yet", highlight=False)
            continue
        console.print(
            f"minutes per {what}: median {spread.median:.1f}, 90th percentile "
            f"{spread.p90:.1f} (n={spread.n})",
            highlight=False,
        )


@app.command()
def simulate(
    url: Annotated[str, typer.Option("--url", help="The study's open link (…/join/…).")],
    participants: Annotated[int, typer.Option(min=1, max=10_000)] = 5,
    seed: Seed = 0,
    concurrency: Annotated[int, typer.Option(min=1, max=256)] = 4,
    retest_noise: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="The chance a participant answers a question asked again (a retest probe) "
            "differently from their first answer.",
        ),
    ] = 0.0,
    careless: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="The share of participants who click through (fast, the same short message "
            "and self-report every turn): the study should mark them careless.",
        ),
    ] = 0.0,
    think_s: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=60.0,
            help="Seconds a careful participant takes before each message and each pick.",
        ),
    ] = 0.0,
) -> None:
    """Scripted participants take the study over HTTP; their data is labelled simulated."""
    import httpx

    from attunebench.collect.persona import corpus_messages
    from attunebench.collect.simulate import SimulationError
    from attunebench.collect.simulate import simulate as run_simulation

    where, conversations = corpus_messages()
    console.print(f"messages from {where}", highlight=False, soft_wrap=True)
    try:
        outcome = asyncio.run(
            run_simulation(
                url,
                participants,
                seed,
                conversations,
                concurrency=concurrency,
                retest_noise=retest_noise,
                careless=careless,
                think_s=think_s,
            )
        )
    except SimulationError as error:
        fail(str(error), 1)
    except httpx.HTTPError as error:
        fail(f"cannot reach {url}: {error or type(error).__name__}", 1)
    console.print(
        f"{outcome.enrolled} simulated participants enrolled, {outcome.finished} finished, "
        f"{outcome.turns} turns; {outcome.screened_out} screened out"
        + (f"; {outcome.refused_again} second arrivals refused" if outcome.refused_again else "")
        + (f"; {len(outcome.careless_links)} clicked through" if outcome.careless_links else ""),
        highlight=False,
    )
    if outcome.problems:
        fail(f"{len(outcome.problems)} participants stopped: {outcome.problems[0]}", 1)
