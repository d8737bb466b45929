"""Dialect-specific behaviour, one module per database: nothing else may speak a dialect.

What differs per database but is chosen by dialect name (in migrations and in
readers that get a bare driver connection) is dispatched here, in one place.
PostgreSQL (issue 8) adds its entry to each table below.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from labrig.store.dialects import sqlite


@dataclass(frozen=True)
class AppendOnlyTable:
    label: str  # the words a refusal uses for its rows
    keys: tuple[tuple[str, ...], ...]  # its primary and unique keys: no insert may replace a row through them


#: tables whose rows are never changed, removed nor replaced
APPEND_ONLY_TABLES: dict[str, AppendOnlyTable] = {
    "analysis_results": AppendOnlyTable("automatic analysis results", (("id",),)),
    "result_revisions": AppendOnlyTable("result revisions", (("id",), ("result_id", "number"))),
    "role_assignments": AppendOnlyTable("role assignments", (("seq",),)),
    "audit_entries": AppendOnlyTable("audit trail entries", (("seq",),)),
}

_APPEND_ONLY: dict[str, Callable[[str, str, Sequence[Sequence[str]]], list[str]]] = {
    "sqlite": sqlite.append_only_triggers}
_DROP_APPEND_ONLY: dict[str, Callable[[str], list[str]]] = {"sqlite": sqlite.drop_append_only_triggers}
_STORED_TEXT: dict[str, Callable[..., list[tuple[Any, ...]]]] = {"sqlite": sqlite.fetch_stored_text}


def _for(table: dict[str, Any], dialect: str, what: str) -> Any:
    try:
        return table[dialect]
    except KeyError:
        raise NotImplementedError(f"{what} is not written for the {dialect} dialect yet") from None


def append_only_ddl(dialect: str, tables: Sequence[str] = tuple(APPEND_ONLY_TABLES)) -> list[str]:
    """The DDL that makes ``tables`` append-only on ``dialect`` (refuses to run on a dialect without it)."""
    build = _for(_APPEND_ONLY, dialect, "append-only enforcement")
    return [stmt for table in tables
            for stmt in build(table, APPEND_ONLY_TABLES[table].label, APPEND_ONLY_TABLES[table].keys)]


def drop_append_only_ddl(dialect: str, tables: Sequence[str] = tuple(APPEND_ONLY_TABLES)) -> list[str]:
    drop = _for(_DROP_APPEND_ONLY, dialect, "append-only enforcement")
    return [stmt for table in tables for stmt in drop(table)]


def fetch_stored_text(dialect: str, dbapi_conn: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` with text values as their stored bytes (see :func:`sqlite.fetch_stored_text`)."""
    return _for(_STORED_TEXT, dialect, "reading stored text as bytes")(dbapi_conn, sql, params)  # type: ignore[no-any-return]
