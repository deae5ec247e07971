"""Setting a database up for a study (`collect init`, which may run again: docs/collecting.md,
"2. Set up the database") and reading it back for the app.
"""

from __future__ import annotations

from dataclasses import dataclass

from attunebench.collect import crud
from attunebench.collect.db import Database, SchemaError, check_schema, migrate, open_engine
from attunebench.collect.security import hash_password
from attunebench.collect.study import Study


@dataclass(frozen=True, slots=True)
class Stored:
    study: Study
    secret: str
    has_admin_password: bool
    join_slug: str | None  # the open link's, when the study has one


def init_database(url: str, study: Study, source: str, admin_password: str | None) -> Stored:
    engine = open_engine(url, create=True)
    try:
        migrate(engine)
        database = Database(engine)
        with database.write() as session:
            crud.store_study(session, study, source)
            crud.ensure_meta(session, crud.SECRET_KEY)
            if study.enrolment.open:
                crud.ensure_meta(session, crud.JOIN_SLUG)
            if admin_password is not None:
                crud.set_meta(session, crud.ADMIN_PASSWORD, hash_password(admin_password))
        return read_stored(database)
    finally:
        engine.dispose()


def read_stored(db: Database) -> Stored:
    """The stored study and secret; SchemaError if `init` has not run on this database."""
    check_schema(db.engine)
    with db.read() as session:
        study = crud.load_stored_study(session)
        secret = crud.get_meta(session, crud.SECRET_KEY)
        has_password = crud.get_meta(session, crud.ADMIN_PASSWORD) is not None
        slug = crud.get_meta(session, crud.JOIN_SLUG)
    if study is None or secret is None:
        raise SchemaError("no study is stored in this database: run `attunebench collect init`")
    return Stored(study, secret, has_password, slug if study.enrolment.open else None)
