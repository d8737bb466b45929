"""Alembic migrations, applied automatically when a store opens.

No alembic.ini: the configuration is built here and the open connection is
handed to ``migrations/env.py``. On SQLite, batch migrations rebuild tables;
with foreign keys on, rebuilding a parent table cascade-deletes its children,
so foreign keys are switched off (outside any transaction) for the migration
and checked afterwards with ``PRAGMA foreign_key_check``.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from labrig.errors import DatabaseCorruptError, SchemaTooNewError
from labrig.store.dialects import sqlite as sqlite_dialect

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


def known_revisions() -> set[str]:
    return {script.revision for script in ScriptDirectory.from_config(_config()).walk_revisions()}


def head_revision() -> str:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def refuse_unknown_revision(revision: str | None, where: str) -> None:
    """Raise :class:`SchemaTooNewError` when the database was migrated by a newer Labrig."""
    if revision is not None and revision not in known_revisions():
        raise SchemaTooNewError(
            f"{where} was written by a newer Labrig (schema revision {revision}, this version "
            f"knows up to {head_revision()}). Install the newer Labrig; the database was not "
            "modified"
        )


def upgrade(engine: Engine, target: str = "head") -> None:
    """Bring the schema at ``engine`` to ``target`` (normally head), in one transaction."""
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
