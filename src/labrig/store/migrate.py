"""Alembic migrations, applied automatically when a store opens.

No alembic.ini: the configuration is built here and the open connection is
handed to ``migrations/env.py``. On SQLite, batch migrations rebuild tables;
with foreign keys on, rebuilding a parent table cascade-deletes its children,
so foreign keys are switched off (outside any transaction) for the migration
and checked afterwards with ``PRAGMA foreign_key_check``.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine
from sqlalchemy.exc import DatabaseError

from labrig.errors import DatabaseCorruptError, SchemaTooNewError
from labrig.store.dialects import sqlite as sqlite_dialect

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_REVISION = re.compile(r'^revision = "([^"]+)"$', re.M)
_DOWN_REVISION = re.compile(r'^down_revision = (?:None|"([^"]+)")$', re.M)


def _config() -> Config:
    from alembic.config import Config  # only when a migration runs: ~0.3 s of every start-up

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


@functools.cache
def revisions() -> tuple[str, ...]:
    """This build's schema revisions, oldest first, read from the migration files themselves (the
    two lines every one of them declares), without loading Alembic."""
    down_of: dict[str, str | None] = {}
    for path in (MIGRATIONS_DIR / "versions").glob("[0-9]*.py"):
        text = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(text), _DOWN_REVISION.search(text)
        assert revision and down, f"{path.name} declares no revision or down_revision"
        down_of[revision[1]] = down[1]
    chain: list[str] = []
    following = {down: rev for rev, down in down_of.items()}
    at = following.get(None)
    while at is not None:
        chain.append(at)
        at = following.get(at)
    assert len(chain) == len(down_of), "the migrations do not form one chain"
    return tuple(chain)


def known_revisions() -> set[str]:
    return set(revisions())


def head_revision() -> str:
    return revisions()[-1]


def current_revision(engine: Engine) -> str | None:
    """The revision the database at ``engine`` is at; None for one never migrated."""
    reading = {sqlite_dialect.READ_ONLY_OPTION: True}  # a plain BEGIN: no write lock to wait for
    with engine.connect().execution_options(**reading) as conn:
        try:
            return conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
        except DatabaseError:  # no alembic_version table yet: a new catalog
            return None


def refuse_unknown_revision(revision: str | None, where: str) -> None:
    """Raise :class:`SchemaTooNewError` when the database was migrated by a newer Labrig."""
    if revision is not None and revision not in known_revisions():
        raise SchemaTooNewError(
            f"{where} was written by a newer Labrig (schema revision {revision}, this version "
            f"knows up to {head_revision()}). Install the newer Labrig; the database was not "
            "modified"
        )


def upgrade(engine: Engine, target: str = "head", found: str | None = None) -> None:
    """Bring the schema at ``engine`` to ``target`` (normally head), in one transaction; nothing
    to do, and Alembic not even loaded, when it is there already (``found``: the revision the
    caller has just read, at head: not read again)."""
    head = head_revision()
    if target == "head" and (found == head or current_revision(engine) == head):
        return
    from alembic import command

    cfg = _config()
    with engine.connect() as conn:
        is_sqlite = engine.dialect.name == "sqlite"
        raw = conn.connection.dbapi_connection
        if is_sqlite:
            sqlite_dialect.set_foreign_keys(raw, False)  # type: ignore[arg-type]
        try:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, target)
            if is_sqlite:
                violations = sqlite_dialect.foreign_key_violations(raw)  # type: ignore[arg-type]
                if violations:
                    raise DatabaseCorruptError(
                        f"the schema migration left {len(violations)} broken references; "
                        "restore the database from its backup and report this"
                    )
        finally:
            if is_sqlite:
                sqlite_dialect.set_foreign_keys(raw, True)  # type: ignore[arg-type]
