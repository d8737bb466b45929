"""Dialect-specific behaviour, one module per database: nothing else may speak a dialect.

What differs per database but is chosen by dialect name (in migrations and in
readers that get a bare driver connection) is dispatched here, in one place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from labrig.store.dialects import postgresql, sqlite


@dataclass(frozen=True)
class AppendOnlyTable:
    label: str  # the words a refusal uses for its rows
    # its primary and unique keys: no insert may replace a row through them
    keys: tuple[tuple[str, ...], ...]


#: tables whose rows are never changed, removed nor replaced
APPEND_ONLY_TABLES: dict[str, AppendOnlyTable] = {
    "analysis_results": AppendOnlyTable("automatic analysis results", (("id",),)),
    "result_revisions": AppendOnlyTable("result revisions", (("id",), ("result_id", "number"))),
    "role_assignments": AppendOnlyTable("role assignments", (("seq",),)),
    "audit_entries": AppendOnlyTable("audit trail entries", (("seq",),)),
}

_APPEND_ONLY: dict[str, Callable[[str, str, Sequence[Sequence[str]]], list[str]]] = {
    "sqlite": sqlite.append_only_triggers,
    "postgresql": postgresql.append_only_triggers,
}
_DROP_APPEND_ONLY: dict[str, Callable[[str], list[str]]] = {
    "sqlite": sqlite.drop_append_only_triggers,
    "postgresql": postgresql.drop_append_only_triggers,
}
_STORED_TEXT: dict[str, Callable[..., list[tuple[Any, ...]]]] = {
    "sqlite": sqlite.fetch_stored_text,
    "postgresql": postgresql.fetch_stored_text,
}


def _for(table: dict[str, Any], dialect: str, what: str) -> Any:
    try:
        return table[dialect]
    except KeyError:
        raise NotImplementedError(f"{what} is not written for the {dialect} dialect yet") from None


def append_only_ddl(dialect: str, tables: Sequence[str] = tuple(APPEND_ONLY_TABLES)) -> list[str]:
    """The DDL that makes ``tables`` append-only on ``dialect`` (refuses to run on a
    dialect without it)."""
    build = _for(_APPEND_ONLY, dialect, "append-only enforcement")
    return [
        stmt
        for table in tables
        for stmt in build(table, APPEND_ONLY_TABLES[table].label, APPEND_ONLY_TABLES[table].keys)
    ]


def drop_append_only_ddl(
    dialect: str, tables: Sequence[str] = tuple(APPEND_ONLY_TABLES)
) -> list[str]:
    drop = _for(_DROP_APPEND_ONLY, dialect, "append-only enforcement")
    return [stmt for table in tables for stmt in drop(table)]


def fetch_stored_text(
    dialect: str, dbapi_conn: Any, sql: str, params: Sequence[Any] = ()
) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` with text values as their stored bytes (see
    :func:`sqlite.fetch_stored_text`)."""
    return _for(_STORED_TEXT, dialect, "reading stored text as bytes")(dbapi_conn, sql, params)  # type: ignore[no-any-return]


# -- raw statements on a driver connection (labrig.store.database.RawTransaction) --

_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@dataclass(frozen=True)
class RawDialect:
    """What raw SQL needs to know about a database: how to begin, its parameter style,
    datetimes and lists."""

    name: str
    begin_write: Callable[[Any], None]
    to_db_datetime: Callable[[datetime | None], Any]
    from_db_datetime: Callable[[Any], datetime | None]
    #: a list of ids as one parameter: a JSON array for SQLite's json_each,
    #: a native array for PostgreSQL
    id_list: Callable[[Sequence[str]], Any]
    named_style: bool  # True: ``:name`` parameters as written; False: rewritten to ``%(name)s``

    def sql(self, text: str) -> str:
        """``text`` written with ``:name`` parameters, in this driver's parameter style."""
        return text if self.named_style else _NAMED.sub(r"%(\1)s", text.replace("%", "%%"))

    def positional(self, count: int) -> str:
        """``count`` positional parameters, comma-separated (a tuple binds faster than a dict:
        no name lookups)."""
        return ", ".join(("?" if self.named_style else "%s",) * count)


RAW_DIALECTS: dict[str, RawDialect] = {
    "sqlite": RawDialect(
        "sqlite",
        sqlite.begin_write,
        sqlite.to_db_datetime,
        sqlite.from_db_datetime,
        lambda ids: json.dumps(list(ids)),
        True,
    ),
    "postgresql": RawDialect(
        "postgresql",
        postgresql.begin_write,
        postgresql.to_db_datetime,
        postgresql.from_db_datetime,
        list,
        False,
    ),
}


def raw_dialect(name: str) -> RawDialect:
    return _for(RAW_DIALECTS, name, "raw SQL")  # type: ignore[no-any-return]


#: PostgreSQL's advisory lock classes: 7340001 the audit chain's, 7340002 the output keys' (below),
#: 7340003 a migration's and 7340004 a new catalog's meta rows' (labrig.store.opening)
#:
#: a statement that makes appending to the audit chain one writer at a time
#: (None: write transactions already are)
_CHAIN_LOCK: dict[str, str | None] = {
    "sqlite": None,  # BEGIN IMMEDIATE: one writer per database
    "postgresql": "SELECT pg_advisory_xact_lock(7340001)",  # held to the end of the transaction
}


def chain_lock_sql(dialect: str) -> str | None:
    return _for(_CHAIN_LOCK, dialect, "serialising the audit chain")  # type: ignore[no-any-return]


#: a statement that makes committing outputs one writer at a time per idempotency key, given the
#: sorted keys as ``keys`` (None: write transactions already are one at a time). PostgreSQL's
#: workers commit side by side, so two runs of one key could each find no first output and both
#: insert one; the lock (class 7340002, apart from the audit chain's 7340001), taken in one order
#: by every worker so that two batches never wait on each other, makes the second wait for the
#: first's commit and then read its output
_KEY_LOCK: dict[str, str | None] = {
    "sqlite": None,  # BEGIN IMMEDIATE: one writer per database
    "postgresql": (
        "SELECT pg_advisory_xact_lock(7340002, h) FROM (SELECT DISTINCT hashtext(k) AS h "
        "FROM unnest(CAST(%(keys)s AS text[])) AS k ORDER BY h) AS s"
    ),
}


def key_lock_sql(dialect: str) -> str | None:
    return _for(_KEY_LOCK, dialect, "serialising output commits")  # type: ignore[no-any-return]


#: whether each commit's new rows get sequence numbers above those of every commit before it:
#: true where one transaction writes at a time, so a reader that saw sequence number N will
#: never see a new row below N (on PostgreSQL two transactions may commit in the other order
#: than they drew their numbers)
_SERIAL_COMMITS: dict[str, bool] = {"sqlite": True, "postgresql": False}


def commits_in_seq_order(dialect: str) -> bool:
    return _for(_SERIAL_COMMITS, dialect, "ordering commits")  # type: ignore[no-any-return]
