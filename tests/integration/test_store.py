"""The SQLite store: durable settings, write transactions, and refusals that leave files
untouched."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import select, text

from labrig.errors import (
    DatabaseCorruptError,
    ForeignDatabaseError,
    ReadOnlySessionError,
    SchemaTooNewError,
    StoreUnwritableError,
)
from labrig.store import Store, open_store, paths
from labrig.store.migrate import head_revision
from labrig.store.models import Meta


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_sqlite_runs_in_wal_with_full_sync_foreign_keys_and_busy_timeout(store: Store) -> None:
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000


def test_store_is_migrated_to_head_and_marked_as_labrigs(store: Store) -> None:
    assert store.revision() == head_revision()
    assert store.meta("app") == "labrig"
    assert store.media_dir.is_dir()
    assert store.db_path == store.root / "labrig.db"


def test_reopening_keeps_identity_and_data(tmp_path: Path) -> None:
    first = open_store(tmp_path / "s")
    store_id = first.meta("store_id")
    with first.write() as session:
        session.add(Meta(key="note", value="kept"))
    first.close()
    again = open_store(tmp_path / "s")
    assert again.meta("store_id") == store_id
    assert again.meta("note") == "kept"
    again.close()


def test_write_transactions_begin_immediate_so_read_then_write_never_fails_locked(
    store: Store,
) -> None:
    # A deferred transaction that reads and then writes fails at once with "database is locked"
    # when another writer got in between; BEGIN IMMEDIATE waits on the busy timeout instead.
    with store.write() as session:
        session.add(Meta(key="counter", value="0"))
    errors: list[BaseException] = []

    def bump() -> None:
        try:
            for _ in range(25):
                with store.write() as session:
                    row = session.get(Meta, "counter")
                    assert row is not None
                    row.value = str(int(row.value) + 1)
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.meta("counter") == "100"


def test_begin_immediate_is_what_the_write_session_issues(store: Store) -> None:
    statements: list[str] = []
    from sqlalchemy import event

    event.listen(store.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    with store.write() as session:
        session.execute(text("SELECT 1"))
    with store.read() as session:
        session.execute(text("SELECT 1"))
    assert "BEGIN IMMEDIATE" in statements
    assert statements.count("BEGIN") == 1


def test_read_session_refuses_writes(store: Store) -> None:
    with pytest.raises(ReadOnlySessionError) as info, store.read() as session:
        session.add(Meta(key="sneaky", value="x"))
        session.flush()
    assert info.value.code == "LABRIG_READ_ONLY_SESSION"
    assert store.meta("sneaky") is None


def test_corrupt_database_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    db = root / paths.DB_FILENAME
    db.write_bytes(b"this is not a database, it is a shopping list\n" * 100)
    before = _digest(db)
    with pytest.raises(DatabaseCorruptError) as info:
        open_store(root)
    assert info.value.code == "LABRIG_DB_CORRUPT"
    assert str(db) in info.value.message and "backup" in info.value.message
    assert _digest(db) == before
    assert sorted(p.name for p in root.iterdir()) == [paths.DB_FILENAME]


def test_damaged_pages_behind_a_valid_header_are_refused_and_left_untouched(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s")
    with store.write() as session:
        session.add_all(Meta(key=f"k{i}", value="v" * 500) for i in range(200))
    store.close()
    db = tmp_path / "s" / paths.DB_FILENAME
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    data[4096 : 4096 * 3] = b"\xff" * (4096 * 2)  # smash two pages after the header page
    db.write_bytes(bytes(data))
    before = _digest(db)
    with pytest.raises(DatabaseCorruptError):
        open_store(tmp_path / "s")
    assert _digest(db) == before


def test_another_programs_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    db = root / paths.DB_FILENAME
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    before = _digest(db)
    with pytest.raises(ForeignDatabaseError) as info:
        open_store(root)
    assert info.value.code == "LABRIG_DB_FOREIGN"
    assert "invoices" in info.value.message
    assert _digest(db) == before
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # not switched to WAL


def test_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s")
    with store.write() as session:
        session.execute(text("UPDATE alembic_version SET version_num = '0999_from_the_future'"))
    store.close()
    db = tmp_path / "s" / paths.DB_FILENAME
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = _digest(db)
    with pytest.raises(SchemaTooNewError) as info:
        open_store(tmp_path / "s")
    assert info.value.code == "LABRIG_SCHEMA_TOO_NEW"
    assert "0999_from_the_future" in info.value.message and "newer Labrig" in info.value.message
    assert _digest(db) == before


@pytest.mark.parametrize(
    "make_root",
    [
        lambda tmp: tmp / "a-file" / "store",  # parent is a regular file
        lambda tmp: Path("/proc/labrig-store"),  # not writable even for root
    ],
)
def test_unwritable_store_path_is_refused_with_what_to_do(tmp_path: Path, make_root) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a-file").write_text("occupied")
    root = make_root(tmp_path)
    with pytest.raises(StoreUnwritableError) as info:
        open_store(root)
    assert info.value.code == "LABRIG_STORE_UNWRITABLE"
    assert str(root) in info.value.message and "--store" in info.value.message
    assert (tmp_path / "a-file").read_text() == "occupied"


def test_store_root_comes_from_argument_then_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LABRIG_STORE", str(tmp_path / "env"))
    assert paths.resolve_root(tmp_path / "arg") == tmp_path / "arg"
    assert paths.resolve_root(None) == tmp_path / "env"
    monkeypatch.delenv("LABRIG_STORE")
    assert "labrig" in str(paths.resolve_root(None)).lower()


def test_meta_is_queryable_with_sqlalchemy_2_style(store: Store) -> None:
    with store.read() as session:
        keys = set(session.scalars(select(Meta.key)))
    assert {"app", "store_id", "created_at"} <= keys


def test_an_older_store_is_migrated_forward_keeping_its_data(tmp_path: Path) -> None:
    from labrig.events import record_event
    from labrig.store import migrate
    from labrig.store.dialects.sqlite import create_sqlite_engine

    root = tmp_path / "old"
    root.mkdir()
    engine = create_sqlite_engine(root / paths.DB_FILENAME)
    migrate.upgrade(engine, "0001_foundation")  # as an earlier Labrig left it
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO labrig_meta (key, value) VALUES ('app', 'labrig'), ('note', 'old')")
        )
    engine.dispose()
    store = open_store(root)
    assert store.revision() == head_revision() != "0001_foundation"
    assert store.meta("note") == "old"
    with store.write() as session:
        record_event(session, "plugin.after_upgrade", {})
    store.close()


def test_many_processes_can_open_the_same_store_at_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    open_store(tmp_path / "s").close()
    code = "import sys; from labrig.store import open_store; open_store(sys.argv[1]).close()"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path / "s")], stderr=subprocess.PIPE, text=True
        )
        for _ in range(8)
    ]
    results = [(p.wait(timeout=60), p.stderr.read() if p.stderr else "") for p in procs]
    assert [rc for rc, _ in results] == [0] * 8, [err for _, err in results if err]
    assert not list((tmp_path / "s").glob(".labrig-write-probe*"))
