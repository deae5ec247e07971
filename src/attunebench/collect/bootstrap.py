"""Setting a database up for a study (`collect init`) and reading it back for the app.

`init_database` is idempotent: it upgrades the schema, stores the study (a database belongs to
one study id; re-running with the same id replaces the stored configuration), keeps the random
signing key it made the first time, and sets the admin password when one is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from attunebench.collect import crud
from attunebench.collect.db import Database, SchemaError, check_schema, make_engine, migrate
from attunebench.collect.security import hash_password
from attunebench.collect.study import Study


@dataclass(frozen=True, slots=True)
class Stored:
    study: Study
    secret: str
    has_admin_password: bool


def init_database(url: str, study: Study, source: str, admin_password: str | None) -> Stored:
    engine = make_engine(url)
    try:
        migrate(engine)
        with Database(engine).write() as session:
            crud.store_study(session, study, source)
            secret = crud.ensure_secret(session)
            if admin_password is not None:
                crud.set_meta(session, crud.ADMIN_PASSWORD, hash_password(admin_password))
            has_password = crud.get_meta(session, crud.ADMIN_PASSWORD) is not None
    finally:
        engine.dispose()
    return Stored(study, secret, has_password)


def read_stored(db: Database) -> Stored:
    """The stored study and secret; SchemaError if `init` has not run on this database."""
    check_schema(db.engine)
    with db.read() as session:
        study = crud.load_stored_study(session)
        secret = crud.get_meta(session, crud.SECRET_KEY)
        has_password = crud.get_meta(session, crud.ADMIN_PASSWORD) is not None
    if study is None or secret is None:
        raise SchemaError("no study is stored in this database: run `attunebench collect init`")
    return Stored(study, secret, has_password)
