"""The database itself refuses to change or remove automatic results, revisions, role assignments
and audit entries."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy.exc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from labrig.store import migrate, open_store, paths
from labrig.store.dialects import APPEND_ONLY_TABLES
from labrig.store.dialects.sqlite import create_sqlite_engine
from labrig.store.models import AnalysisResultRecord, Attempt
from tests.integration.review.conftest import Rig

TABLES = sorted(APPEND_ONLY_TABLES)


def _populate(rig: Rig) -> None:
    """At least one row in every append-only table."""
    gov = rig.services.governance
    gov.access.set_role("alice", "admin", "first admin of the bench")
    gov.revisions.revise(rig.published_id, {"track:0.extent": 5}, "fixed")


def _snapshot(db: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(db) as conn:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in TABLES}


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    table=st.sampled_from(TABLES),
    column=st.integers(0, 20),
    row=st.integers(0, 10),
    statement=st.sampled_from(
        ["update", "delete", "delete_all", "update_all", "replace", "upsert"]
    ),
)
def test_direct_sql_update_or_delete_is_refused_by_the_database(
    rig: Rig, table: str, column: int, row: int, statement: str
) -> None:
    if not _snapshot(rig.store.db_path)["audit_entries"]:
        _populate(rig)
    before = _snapshot(rig.store.db_path)
    conn = sqlite3.connect(rig.store.db_path)  # an operator with a database tool, not Labrig's code
    try:
        columns = _columns(conn, table)
        name = columns[column % len(columns)]
        rowid = conn.execute(f"SELECT rowid FROM {table} ORDER BY rowid").fetchall()
        target = rowid[row % len(rowid)][0]
        # a value of its type
        other = f"CASE WHEN typeof({name}) = 'integer' THEN {name} + 1000 ELSE 'x' END"
        sql = {
            "update": f"UPDATE {table} SET {name} = {other} WHERE rowid = {target}",
            "update_all": f"UPDATE {table} SET {name} = {name}",
            "delete": f"DELETE FROM {table} WHERE rowid = {target}",
            "delete_all": f"DELETE FROM {table}",
            "replace": f"REPLACE INTO {table} SELECT * FROM {table} WHERE rowid = {target}",
            "upsert": f"INSERT INTO {table} SELECT * FROM {table} WHERE rowid = {target} AND 1 "
            f"ON CONFLICT DO UPDATE SET {name} = {other}",
        }[statement]
        with pytest.raises(sqlite3.IntegrityError, match="LABRIG_APPEND_ONLY"):
            conn.execute(sql)
        conn.commit()
    finally:
        conn.close()
    assert _snapshot(rig.store.db_path) == before


def test_the_orm_cannot_change_an_automatic_result_either(rig: Rig) -> None:
    with (
        pytest.raises(sqlalchemy.exc.IntegrityError, match="LABRIG_APPEND_ONLY"),
        rig.store.write() as session,
    ):
        row = session.get(AnalysisResultRecord, rig.published_id)
        assert row is not None
        row.status = "blocked"
    with (
        pytest.raises(sqlalchemy.exc.IntegrityError, match="LABRIG_APPEND_ONLY"),
        rig.store.write() as session,
    ):
        session.execute(text("DELETE FROM analysis_results"))
    with rig.store.read() as session:
        row = session.get(AnalysisResultRecord, rig.published_id)
        assert row is not None and row.status == "published"


def test_an_older_store_gets_the_triggers_and_keeps_its_results(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    engine = create_sqlite_engine(root / paths.DB_FILENAME)
    migrate.upgrade(engine, "0007_lean_job_indexes")  # as the previous Labrig left it
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO labrig_meta (key, value) VALUES ('app', 'labrig')"))
        conn.execute(
            text("INSERT INTO sessions VALUES ('s', 'S-1', 'reach', 'ana', '2026-01-01 00:00:00')")
        )
        conn.execute(text("INSERT INTO attempts VALUES ('a', 's', 1, '2026-01-01 00:00:00')"))
        conn.execute(
            text(
                "INSERT INTO analysis_results VALUES ('r', 'a', 'published', 0, '[]', '{}', 'd', "
                "'2026-01-01 00:00:00')"
            )
        )
    engine.dispose()
    store = open_store(root)
    try:
        with store.read() as session:
            triggers = set(
                session.scalars(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))
            )
            assert session.get(AnalysisResultRecord, "r") is not None
            attempt = session.get(Attempt, "a")  # given its result's status (migration 0023)
            assert attempt is not None and attempt.result_status == "published"
        # beside them, the one that keeps an attempt's result status (an insert, never a change)
        assert triggers == {
            f"{t}_no_{op}" for t in TABLES for op in ("update", "delete", "replace")
        } | {"analysis_results_attempt_status"}
        with pytest.raises(sqlalchemy.exc.IntegrityError), store.write() as session:
            session.execute(text("UPDATE analysis_results SET document = '{\"x\": 1}'"))
    finally:
        store.close()
