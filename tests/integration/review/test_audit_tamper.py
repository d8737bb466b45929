"""Tampering with the audit trail, as an attacker with the database file would (triggers dropped
first): every single-byte change is detected by verification, which names the first broken entry."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from labrig.domain.audit import COLUMNS
from labrig.events.audit import AuditTrail, chain_head
from labrig.store import Store, open_store
from labrig.store.dialects import drop_append_only_ddl
from tests.integration.review.conftest import Rig, as_user
from tests.support.results import TemplateResults, copy_store


def _build_trail(store: Store, published_id: str) -> None:
    """A trail of role changes, revisions and release rollbacks by several people."""
    from labrig.review.revisions import RevisionService

    admin = as_user(store, "ada")
    admin.set_role("ada", "admin", "first admin")
    admin.set_role("Rita", "reviewer", "new reviewer — ünïcode reason ✓")
    admin.set_role("tom", "technician", "new technician")
    reviews = RevisionService(store, as_user(store, "rita"))
    for n in range(4):
        reviews.revise(published_id, {f"track:{n % 3}.extent": 10 + n}, f"revision {n}")
    admin.set_role("tom", "none", "left the lab")


@pytest.fixture(scope="module")
def tampered(
    template: tuple[Path, TemplateResults], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Store, sqlite3.Connection]]:
    """One store with a trail, and an attacker's connection to it with the triggers dropped."""
    root = copy_store(template[0], tmp_path_factory.mktemp("tamper") / "store")
    store = open_store(root)
    _build_trail(store, template[1].published_id)
    attacker = sqlite3.connect(store.db_path, isolation_level=None)
    for statement in drop_append_only_ddl("sqlite", ["audit_entries"]):
        attacker.execute(statement)
    yield store, attacker
    attacker.close()
    store.close()


def _stored(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    conn.text_factory = bytes
    try:
        return conn.execute(
            f"SELECT {', '.join(COLUMNS)} FROM audit_entries ORDER BY seq"
        ).fetchall()
    finally:
        conn.text_factory = str


def _write(conn: sqlite3.Connection, seq: int, column: str, value: Any) -> None:
    if isinstance(value, bytes):
        conn.execute(
            f"UPDATE audit_entries SET {column} = CAST(? AS TEXT) WHERE seq = ?", (value, seq)
        )
    else:
        conn.execute(f"UPDATE audit_entries SET {column} = ? WHERE seq = ?", (value, seq))


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    row=st.integers(0, 100),
    column=st.sampled_from(COLUMNS),
    position=st.integers(0, 10_000),
    byte=st.integers(0, 255),
)
def test_any_single_byte_change_is_detected_and_the_first_broken_entry_named(
    tampered: tuple[Store, sqlite3.Connection], row: int, column: str, position: int, byte: int
) -> None:
    store, attacker = tampered
    trail = AuditTrail(store)
    assert trail.verify().intact
    rows = _stored(attacker)
    original = rows[row % len(rows)]
    seq, value = original[0], original[COLUMNS.index(column)]
    raw = str(value).encode() if column == "seq" else value
    at = position % len(raw)
    assume(raw[at] != byte)
    changed = raw[:at] + bytes([byte]) + raw[at + 1 :]
    if column == "seq":  # an INTEGER PRIMARY KEY takes only a new, unused number
        assume(changed.isdigit() and int(changed) != seq)
        changed_seq = int(changed)
        assume(changed_seq not in {r[0] for r in rows})
        _write(attacker, seq, "seq", changed_seq)
        expected, restore_at = (changed_seq if changed_seq < seq else seq), changed_seq
    else:
        _write(attacker, seq, column, changed)
        expected, restore_at = seq, seq
    try:
        report = trail.verify()
        assert not report.intact
        assert report.first_broken == expected, report
        assert report.problem
    finally:
        _write(attacker, restore_at, column, seq if column == "seq" else value)
    assert trail.verify().intact


def test_a_removed_entry_is_named_by_its_number(rig: Rig) -> None:
    _build_trail(rig.store, rig.published_id)
    with sqlite3.connect(rig.store.db_path) as conn:
        for statement in drop_append_only_ddl("sqlite", ["audit_entries"]):
            conn.execute(statement)
        conn.execute("DELETE FROM audit_entries WHERE seq = 3")
    report = AuditTrail(rig.store).verify()
    assert (report.intact, report.first_broken, report.head.seq) == (False, 3, 2)
    assert "missing" in (report.problem or "")


def test_a_rewritten_chain_verifies_but_no_longer_has_the_head_an_export_recorded(rig: Rig) -> None:
    """What the head is for: an attacker who rewrites every hash after their change passes local
    verification, but the head recorded earlier (in an export or sync batch) is gone from the
    chain."""
    from labrig.domain.audit import CONTENT, entry_hash

    _build_trail(rig.store, rig.published_id)
    with rig.store.read() as session:
        exported = chain_head(session)
    with sqlite3.connect(rig.store.db_path) as conn:
        for statement in drop_append_only_ddl("sqlite", ["audit_entries"]):
            conn.execute(statement)
        conn.execute("UPDATE audit_entries SET reason = 'routine' WHERE seq = 2")
        prev = conn.execute("SELECT entry_hash FROM audit_entries WHERE seq = 1").fetchone()[0]
        for values in conn.execute(
            f"SELECT {', '.join(CONTENT)} FROM audit_entries WHERE seq >= 2 ORDER BY seq"
        ).fetchall():
            prev_next = entry_hash(prev, dict(zip(CONTENT, values, strict=True)))
            conn.execute(
                "UPDATE audit_entries SET prev_hash = ?, entry_hash = ? WHERE seq = ?",
                (prev, prev_next, values[0]),
            )
            prev = prev_next
    report = AuditTrail(rig.store).verify()
    assert report.intact and report.head.seq == exported.seq
    # the comparison an export or sync check makes
    assert report.head.entry_hash != exported.entry_hash
