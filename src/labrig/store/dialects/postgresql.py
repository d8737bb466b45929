"""Everything PostgreSQL-specific: the engine, a look at a database before migrating it,
append-only triggers.

Several workstations share one PostgreSQL catalog and queue (``--db
postgresql+psycopg://…`` or ``LABRIG_DB``); the media store is a shared folder.
Transactions run at READ COMMITTED, PostgreSQL's default: the queue's claim
locks the rows it leases with ``FOR UPDATE SKIP LOCKED`` so concurrent workers
on other machines never wait for, nor take, each other's jobs, and every fenced
write repeats its fence in its ``WHERE`` clause.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from labrig.errors import DatabaseUnreachableError, ForeignDatabaseError

URL_SCHEMES = ("postgresql", "postgresql+psycopg")


@dataclass(frozen=True)
class DatabaseFacts:
    tables: frozenset[str]
    revision: str | None


def is_postgresql_url(url: str) -> bool:
    return url.split("://", 1)[0] in URL_SCHEMES


def create_postgresql_engine(url: str, **kwargs: Any) -> Engine:
    """An engine on ``url`` (``postgresql+psycopg://user@host:port/db``), its connections
    checked before use."""
    parsed = make_url(url)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    # no hstore column: not looking its type up saves every connection's first round trip
    return create_engine(parsed, pool_pre_ping=True, use_native_hstore=False, **kwargs)


def redacted(url: str) -> str:
    """The URL as messages may show it: without a password."""
    return make_url(url).render_as_string(hide_password=True)


def inspect_database(engine: Engine, url: str) -> DatabaseFacts:
    """Look at the database without changing it; refuse one of another program."""
    try:
        with engine.connect() as conn:
            tables = frozenset(inspect(conn).get_table_names())
            revision = None
            if "alembic_version" in tables:
                revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except OperationalError as exc:
        raise DatabaseUnreachableError(
            f"cannot reach the catalog database at {redacted(url)} "
            f"({str(exc.orig).strip().splitlines()[0]}). Check that the server runs, the address "
            "and port, and that this workstation may connect"
        ) from exc
    if tables and "labrig_meta" not in tables:
        raise ForeignDatabaseError(
            f"the database at {redacted(url)} belongs to another program (tables: "
            f"{', '.join(sorted(tables)[:5])}). Create an empty database for Labrig and point --db "
            "at it; nothing was changed"
        )
    return DatabaseFacts(tables, revision)


# -- the raw path (see labrig.store.database.RawTransaction) --


def begin_write(_dbapi_conn: Any) -> None:
    """psycopg opens a transaction with the first statement: nothing to do."""


def to_db_datetime(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError("naive datetime given to a UTC column; pass an aware datetime")
    return value


def from_db_datetime(value: datetime | None) -> datetime | None:
    return value


# -- append-only tables --


def _function(table: str) -> str:
    return f"labrig_append_only_{table}"


def append_only_triggers(table: str, label: str, _keys: Sequence[Sequence[str]]) -> list[str]:
    """A trigger function raising on UPDATE and DELETE of ``table``, and the trigger that calls it.

    ``INSERT … ON CONFLICT DO UPDATE`` is an UPDATE here and is refused by the same
    trigger; TRUNCATE has its own statement-level trigger.
    """
    message = f"{label} are append-only: Labrig never changes nor removes them"
    return [
        f"CREATE OR REPLACE FUNCTION {_function(table)}() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN RAISE EXCEPTION '{message}' USING ERRCODE = 'integrity_constraint_violation'; END "
        "$$",
        f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION {_function(table)}()",
        f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {_function(table)}()",
    ]


def drop_append_only_triggers(table: str) -> list[str]:
    return [
        f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}",
        f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}",
        f"DROP FUNCTION IF EXISTS {_function(table)}()",
    ]


def fetch_stored_text(
    dbapi_conn: Any, sql: str, params: Sequence[Any] = ()
) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` with text values as UTF-8 bytes (PostgreSQL stores only valid text)."""
    with dbapi_conn.cursor() as cursor:
        cursor.execute(sql.replace("?", "%s"), tuple(params))
        return [
            tuple(v.encode() if isinstance(v, str) else v for v in row) for row in cursor.fetchall()
        ]


# -- delivery cursors (labrig.events.cursors) --

#: the consumer's cursor row, made if missing (at 0: nothing is known to be delivered)
ENSURE_CURSOR = (
    "INSERT INTO outbox_cursors (consumer, seq, names, txid) VALUES (:consumer, 0, :names, 0) "
    "ON CONFLICT (consumer) DO NOTHING"
)
#: the consumer's deliveries for this transaction, unless another dispatcher has them now
CLAIM_CURSOR = (
    "SELECT consumer FROM outbox_cursors WHERE consumer = :consumer FOR UPDATE SKIP LOCKED"
)
#: … waiting for that dispatcher instead
LOCK_CURSOR = "SELECT consumer FROM outbox_cursors WHERE consumer = :consumer FOR UPDATE"
#: the oldest transaction still running (every one below it has ended), as of this statement
SNAPSHOT_XMIN_VALUE = "CAST(CAST(pg_snapshot_xmin(pg_current_snapshot()) AS text) AS bigint)"
SNAPSHOT_XMIN = f"SELECT {SNAPSHOT_XMIN_VALUE}"
