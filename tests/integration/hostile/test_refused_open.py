"""A data folder whose catalog is refused is left as it was found (issue 16).

Each case builds its store with the real commands (an imported video), then damages, truncates,
replaces or removes the catalog and runs the commands a user would: the listing, verify, the event
log, a recording and the window. Each must be refused with its ``LABRIG_*`` code, in time, and the
folder's files (names and bytes) must be exactly what they were: no ``labrig.db-wal`` nor
``-shm`` left by a look at a WAL database, no ``labrig.lock`` left by the window, no new catalog
started beside committed captures.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from labrig.errors import CatalogMissingError, DatabaseCorruptError
from labrig.store import check_openable, open_store, paths
from labrig.store.dialects import sqlite as sqlite_dialect
from tests.conftest import PostgresDatabases
from tests.support.cli import assert_typed, labrig, store_with_a_capture

WINDOW: tuple[str, ...] = ()  # ``labrig`` with no command opens the window
COMMANDS = [
    ("captures",),
    ("verify", "--json"),
    ("events",),
    ("record", "--device", "virtual:markers", "--seconds", "1"),
    WINDOW,
]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store holding an imported video, built once; each test works on a copy."""
    store, _ = store_with_a_capture(tmp_path_factory.mktemp("captured"))
    db = store / paths.DB_FILENAME
    assert db.read_bytes()[18:20] == b"\x02\x02", "the catalog should be in WAL mode"
    assert not _companion(db, "-wal").exists(), "the import should have checkpointed its log"
    return store


def _copy(captured: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(captured, tmp_path / "store", symlinks=True))


def _companion(db: Path, suffix: str) -> Path:
    return db.with_name(db.name + suffix)


def listing(root: Path) -> dict[str, str]:
    """Every entry under ``root`` with its bytes' digest (a folder as ``folder``)."""
    return {
        str(p.relative_to(root)): "folder"
        if p.is_dir()
        else hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
    }


def _flip_the_middle(db: Path) -> None:
    data = bytearray(db.read_bytes())
    for i in range(len(data) // 3, 2 * len(data) // 3):  # pages past the header page
        data[i] ^= 0xFF
    db.write_bytes(bytes(data))


def _break_the_header(db: Path) -> None:
    with db.open("r+b") as fh:
        fh.write(b"not SQLite at all")


def _truncate_to_half(db: Path) -> None:
    os.truncate(db, db.stat().st_size // 2)


def _from_a_newer_labrig(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0999_from_the_future'")
    conn.close()


def _of_another_program(db: Path) -> None:
    db.unlink()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    with conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.close()


REFUSED: dict[str, tuple[Callable[[Path], None], str]] = {
    "damaged-pages": (_flip_the_middle, "LABRIG_DB_CORRUPT"),
    "damaged-header": (_break_the_header, "LABRIG_DB_CORRUPT"),
    "truncated-to-half": (_truncate_to_half, "LABRIG_DB_CORRUPT"),
    "newer-schema": (_from_a_newer_labrig, "LABRIG_SCHEMA_TOO_NEW"),
    "another-programs": (_of_another_program, "LABRIG_DB_FOREIGN"),
}


def _assert_every_command_refused(store: Path, code: str) -> None:
    before = listing(store)
    for command in COMMANDS:
        refused = labrig(store, *command)
        assert_typed(refused)
        said = command or "the window"
        assert refused.returncode == 2, (said, refused.stdout, refused.stderr)
        assert f"labrig: {code}: " in refused.stderr, (said, refused.stderr)
        assert listing(store) == before, said


@pytest.mark.slow
@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_catalog_leaves_the_data_folder_as_it_was(
    captured: Path, tmp_path: Path, case: str
) -> None:
    store = _copy(captured, tmp_path)
    damage, code = REFUSED[case]
    damage(store / paths.DB_FILENAME)
    assert not _companion(store / paths.DB_FILENAME, "-wal").exists()

    _assert_every_command_refused(store, code)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["emptied", "deleted"])
def test_a_lost_catalog_beside_committed_captures_is_refused_not_started_anew(
    captured: Path, tmp_path: Path, case: str
) -> None:
    store = _copy(captured, tmp_path)
    db = store / paths.DB_FILENAME
    if case == "emptied":
        os.truncate(db, 0)
    else:
        for lost in (db, _companion(db, "-wal"), _companion(db, "-shm")):
            lost.unlink(missing_ok=True)

    _assert_every_command_refused(store, "LABRIG_CATALOG_MISSING")
    said = labrig(store, "captures").stderr
    assert "holds 1 committed capture." in said and "labrig recover --adopt" in said


def test_adopting_opens_a_lost_catalog_as_a_new_one(captured: Path, tmp_path: Path) -> None:
    store = _copy(captured, tmp_path)
    os.truncate(store / paths.DB_FILENAME, 0)
    with pytest.raises(CatalogMissingError) as refused:
        check_openable(store)
    assert refused.value.code == "LABRIG_CATALOG_MISSING"

    check_openable(store, allow_missing_catalog=True)
    opened = open_store(store, allow_missing_catalog=True)
    try:
        assert opened.meta("app") == "labrig"
    finally:
        opened.close()
    open_store(store).close()  # a catalog now: opened as any other


def test_an_empty_catalog_with_no_committed_captures_is_a_new_store(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / paths.MEDIA_DIRNAME / "ab").mkdir(parents=True)
    (root / paths.MEDIA_DIRNAME / "ab" / ("ab" * 32 + ".avi")).write_bytes(b"a blob, no manifest")
    (root / paths.DB_FILENAME).write_bytes(b"")

    store = open_store(root)
    try:
        assert store.meta("app") == "labrig"
    finally:
        store.close()


def test_a_refused_look_through_a_leftover_log_removes_only_the_index_it_created(
    captured: Path, tmp_path: Path
) -> None:
    """A ``-wal`` left without its ``-shm`` (copied apart, or a crash) must be read, so the look
    creates a ``-shm``; a refusal removes that one and keeps the log."""
    store = _copy(captured, tmp_path)
    db = store / paths.DB_FILENAME
    _flip_the_middle(db)
    _companion(db, "-wal").write_bytes(b"")
    before = listing(store)

    with pytest.raises(DatabaseCorruptError):
        open_store(store)

    assert listing(store) == before


@pytest.mark.postgresql
def test_an_empty_postgresql_catalog_beside_committed_captures_is_refused(
    captured: Path, tmp_path: Path, postgres: PostgresDatabases
) -> None:
    store = _copy(captured, tmp_path)
    (store / paths.DB_FILENAME).unlink()
    url = postgres.cluster.url(postgres.cluster.create_database())
    before = listing(store)

    with pytest.raises(CatalogMissingError, match="holds 1 committed capture"):
        open_store(store, db=url)
    assert listing(store) == before

    opened = open_store(store, db=url, allow_missing_catalog=True)
    try:
        assert opened.dialect == "postgresql" and opened.meta("app") == "labrig"
    finally:
        opened.close()


def test_a_catalog_too_large_to_read_whole_at_open_is_checked_by_its_length_and_met_damage(
    captured: Path, tmp_path: Path
) -> None:
    """Past the size every page is read at open (QUICK_CHECK_BYTES), a catalog is opened after a
    look at its header, length and schema: a truncated copy is still refused, unchanged; damaged
    pages are found when a command reads them, and said with the catalog's code."""
    store = _copy(captured, tmp_path)
    db = store / paths.DB_FILENAME
    whole = db.read_bytes()
    with sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True) as conn:
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'captures'"
        ).fetchone()
    conn.close()
    with db.open("r+b") as fh:  # the captures' page, not the schema's
        fh.seek((root - 1) * page_size)
        page = fh.read(page_size)
        fh.seek((root - 1) * page_size)
        fh.write(bytes(b ^ 0xFF for b in page))
    damaged = db.read_bytes()
    with pytest.raises(DatabaseCorruptError):  # read whole at open: refused
        sqlite_dialect.inspect_file(db)
    facts = sqlite_dialect.inspect_file(db, quick_check_bytes=0)  # too large to read whole
    assert "labrig_meta" in facts.tables and facts.revision is not None
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        with pytest.raises(sqlite3.DatabaseError) as met:
            conn.execute("SELECT * FROM captures").fetchall()
    finally:
        conn.close()
    typed = sqlite_dialect.damaged_pages(met.value)
    assert typed is not None and typed.code == "LABRIG_DB_CORRUPT", met.value
    assert "labrig doctor" in typed.message
    assert sqlite_dialect.damaged_pages(sqlite3.OperationalError("database is locked")) is None
    assert db.read_bytes() == damaged

    db.write_bytes(whole)
    _truncate_to_half(db)
    with pytest.raises(DatabaseCorruptError, match="header counts"):
        sqlite_dialect.inspect_file(db, quick_check_bytes=0)
    assert not _companion(db, "-wal").exists()


def test_a_refusal_keeps_the_companions_of_a_database_another_process_opened_meanwhile(
    tmp_path: Path,
) -> None:
    """The ``-wal`` and ``-shm`` that were not there before the look are removed on a refusal only
    when no process has the database open: one that opened it meanwhile made them, and a ``-shm``
    removed under it would let the next connection make another, blind to its writes."""
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as made:
        made.execute("PRAGMA journal_mode = WAL")
        made.execute("CREATE TABLE t (x)")
    made.close()
    companions = [_companion(db, "-wal"), _companion(db, "-shm")]
    readers: list[subprocess.Popen[str]] = []
    try:
        with pytest.raises(DatabaseCorruptError), sqlite_dialect.as_found_if_refused(db):
            # inside the look: the companions the reader makes are new to it
            assert not any(c.exists() for c in companions)
            readers.append(_reader(db))
            assert readers[0].stdout is not None and readers[0].stdout.readline() == "open\n"
            raise DatabaseCorruptError("refused while another process opened it")
        assert all(c.exists() for c in companions)
    finally:
        for reader in readers:
            reader.communicate("", timeout=30)


def _reader(db: Path) -> subprocess.Popen[str]:
    """Another process that opens ``db`` (WAL: making its ``-wal`` and ``-shm``), says ``open``
    and keeps it open until its input ends."""
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            f"c = sqlite3.connect({str(db)!r})\n"
            "c.execute('SELECT * FROM t').fetchall()\n"
            "print('open', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
