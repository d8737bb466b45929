"""Everything SQLite-specific: file inspection, pragmas, transaction control.

Python 3.11's sqlite3 driver opens deferred transactions on its own; a deferred
transaction that later writes fails with "database is locked" at once,
ignoring the busy timeout. So the driver's transaction handling is switched
off and every transaction is begun here: ``BEGIN IMMEDIATE`` for sessions that
may write, plain ``BEGIN`` for read-only ones.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event

from labrig.errors import DatabaseCorruptError, ForeignDatabaseError, LabrigError, StoreError
from labrig.fsutil import open_regular

SQLITE_HEADER = b"SQLite format 3\x00"
#: header bytes 18 and 19 (the file format's write and read versions): 2 in WAL mode
_WAL_FORMAT = b"\x02\x02"
BUSY_TIMEOUT_MS = 15_000
#: a catalog up to this size has every page read at each open (SQLite's quick_check, about 0.75 s
#: a GB here); a larger one has its header, length and schema checked, and the whole-file check
#: (:class:`PageCheck`) runs behind the window and in 'labrig doctor', so browsing a catalog of
#: 100,000 attempts does not wait seconds at each command
QUICK_CHECK_BYTES = 256 * 1024 * 1024
READ_ONLY_OPTION = "labrig_read_only"


@dataclass(frozen=True)
class FileFacts:
    """What a read-only look at an existing database file found."""

    exists: bool
    tables: frozenset[str]
    revision: str | None


def inspect_file(path: Path, quick_check_bytes: int = QUICK_CHECK_BYTES) -> FileFacts:
    """Look at ``path`` without modifying it; raise a typed error if it is not ours or damaged.

    Every page is read when the file is at most ``quick_check_bytes`` long; a longer file is
    checked against its header's page count (a truncated file is refused) and its schema read.

    Opened read-only (``mode=ro``) and before any pragma, so a foreign or corrupt file is refused
    byte-for-byte unchanged. A read-only connection to a WAL database creates its ``-wal`` and
    ``-shm`` files; when no ``-wal`` is there, no connection has the database open and no log waits
    to be applied, so the file is read as immutable, which creates nothing. Wrap the look in
    :func:`as_found_if_refused` for the case where the log must be read.
    """
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return FileFacts(False, frozenset(), None)
    with open_regular(path) as fh:  # a folder or a FIFO named like the database: refused
        header = fh.read(_HEADER_BYTES)
    if header[: len(SQLITE_HEADER)] != SQLITE_HEADER:
        raise DatabaseCorruptError(
            f"{path} is not an SQLite database (its header is wrong). Restore it from a backup, or "
            "start Labrig with --store pointing at an empty folder; the file was not touched"
        )
    immutable = header[18:20] == _WAL_FORMAT and not _companion(path, "-wal").exists()
    uri = f"{path.as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")
    size = path.stat().st_size
    try:
        if size > quick_check_bytes and immutable:  # in use, a checkpoint may be extending it
            _check_length(header, size)
        tables, revision = _read_tables(uri, check_pages=size <= quick_check_bytes)
    except sqlite3.DatabaseError as exc:
        raise DatabaseCorruptError(
            f"{path} is damaged ({exc}). Restore it from a backup or move it aside; "
            "Labrig did not modify it"
        ) from exc
    if tables and "labrig_meta" not in tables:
        raise ForeignDatabaseError(
            f"{path} is an SQLite database of another program (tables: "
            f"{', '.join(sorted(tables)[:5])}). Point --store at a Labrig data folder or an "
            "empty one; the file was not touched"
        )
    return FileFacts(True, tables, revision)


#: the part of the file's header read before SQLite opens it (the format's first 100 bytes)
_HEADER_BYTES = 100


def _check_length(header: bytes, size: int) -> None:
    """Raise when the file is shorter than the pages its header counts (a truncated copy). The
    count is the header's own only while its "valid for" number matches its change counter (a
    writer of SQLite before 3.7.0 leaves it stale: then nothing is concluded)."""
    if len(header) < _HEADER_BYTES or header[92:96] != header[24:28]:
        return
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if pages and size < pages * page_size:
        raise sqlite3.DatabaseError(
            f"the file is {size} bytes long but its header counts {pages} pages of {page_size}"
        )


def _read_tables(uri: str, *, check_pages: bool) -> tuple[frozenset[str], str | None]:
    """The tables of the database at ``uri`` and its Alembic revision, after a quick check of
    every page when ``check_pages``."""
    conn = sqlite3.connect(uri, uri=True)
    try:
        if check_pages and conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            raise sqlite3.DatabaseError("quick_check failed")
        tables = frozenset(
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        )
        revision = None
        if "alembic_version" in tables:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            revision = row[0] if row else None
        return tables, revision
    finally:
        conn.close()


#: a page check reports at most this many problems: enough to say what is damaged, not thousands
PAGE_CHECK_LIMIT = 20
#: what the driver raises when the pages themselves are damaged (any other error is not evidence)
_DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


def damaged_pages(exc: BaseException) -> DatabaseCorruptError | None:
    """The typed refusal for ``exc`` when SQLite says the pages it read are damaged (directly or as
    the ``orig`` of a SQLAlchemy error): a large catalog is not read whole at open, so a command may
    meet its damage midway. Else None."""
    cause = getattr(exc, "orig", None) or exc
    if getattr(cause, "sqlite_errorcode", 0) & 0xFF not in _DAMAGE_CODES:
        return None
    return DatabaseCorruptError(
        f"the catalog is damaged ({cause}); the command stopped and its transaction was rolled "
        "back. Run 'labrig doctor', which checks every page and refuses writes until the catalog "
        "is restored from a backup"
    )


class PageCheck:
    """One run of SQLite's ``PRAGMA integrity_check`` on the database at ``path``, on a read-only
    connection of its own.

    Unlike the ``quick_check`` at every open, it also compares every index with its table (an index
    that lost a row lets a file be imported twice), at a cost in proportion to the database: it runs
    in the background or in ``labrig doctor``, never on the way to opening the store. Run it while
    the store is open, so its read-only look leaves no ``-wal`` behind. Threading: :meth:`run` on
    one thread; :meth:`interrupt` from any other.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._interrupted = False

    def run(self) -> list[str] | None:
        """SQLite's words for each problem found (none: the pages are whole), or None when
        :meth:`interrupt` ended the check first. A failure that is not damage (the file
        cannot be read) raises :class:`StoreError`."""
        uri = f"{self.path.as_uri()}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            return self._said(exc)
        conn.text_factory = _text_or_replaced  # the words may quote damaged text
        try:
            with self._lock:
                if self._interrupted:
                    return None
                self._conn = conn
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            said = [str(r[0]) for r in conn.execute(f"PRAGMA integrity_check({PAGE_CHECK_LIMIT})")]
            return [] if said == ["ok"] else said
        except sqlite3.Error as exc:
            return self._said(exc)
        finally:
            with self._lock:
                self._conn = None
            conn.close()

    def _said(self, exc: sqlite3.Error) -> list[str] | None:
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        if code == sqlite3.SQLITE_INTERRUPT and self._interrupted:
            return None
        if code in _DAMAGE_CODES:
            return [str(exc)]
        raise StoreError(
            f"the catalog's page check could not read {self.path} ({exc}); it runs again at the "
            "next start, and 'labrig doctor' runs it on demand"
        ) from exc

    def interrupt(self) -> None:
        """End a check in progress (its :meth:`run` returns None), or one not yet begun."""
        with self._lock:
            self._interrupted = True
            if self._conn is not None:
                self._conn.interrupt()


@contextmanager
def as_found_if_refused(path: Path) -> Iterator[None]:
    """On a refusal (a :class:`LabrigError`) inside, remove the ``-wal`` and ``-shm`` files of
    ``path`` that were not there before, so a refused database leaves its folder as it was.

    Only those: one that was there before may be another program's, with the database open. Nothing
    is removed when a new ``-wal`` holds anything (a reader creates it empty; a writer has come),
    nor while a process has the database open (:func:`_locked`: one that opened it meanwhile made
    them, and a ``-shm`` removed under it would let the next connection make another, each then
    blind to the other's writes).
    """
    companions = [_companion(path, suffix) for suffix in ("-wal", "-shm")]
    before = {c for c in companions if c.exists()}
    try:
        yield
    except LabrigError:
        created = [c for c in companions if c not in before and c.exists()]
        if not any(c.name.endswith("-wal") and c.stat().st_size for c in created) and not _locked(
            [path, *created]
        ):
            for companion in created:
                with suppress(OSError):  # open elsewhere (Windows): it stays
                    companion.unlink(missing_ok=True)
        raise


#: where Linux lists the file locks held by the processes this one can see (its PID namespace),
#: by the file's device and inode
PROC_LOCKS = Path("/proc/locks")


def _locked(paths: Sequence[Path]) -> bool:
    """Whether any process holds a lock on one of ``paths``: a connection to the database holds a
    shared one on its file and its ``-shm`` while it has it open (SQLite's unix files). Read from
    Linux's list of locks, not by trying to take one: closing a file this process opened drops
    every lock the process holds on it, its own connections' included. False where there is no
    such list, and unseen a lock of a process in another PID namespace (a container's); a process
    that opens the database between this look and the removal is not seen either: the window is
    narrowed, not closed."""
    try:
        listed = PROC_LOCKS.read_text(errors="replace")
    except OSError:
        return False
    inodes = set()
    for path in paths:
        try:
            inodes.add(path.stat().st_ino)
        except OSError:
            continue
    # "1: POSIX  ADVISORY  READ 4454 fe:00:2228256 128 128": device (hex) and inode; the inode
    # alone is compared (a match on another device only keeps two empty files)
    for line in listed.splitlines():
        for field in line.split():
            parts = field.split(":")
            if len(parts) == 3 and parts[2].isdigit() and int(parts[2]) in inodes:
                return True
    return False


def _companion(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def create_sqlite_engine(path: Path, **kwargs: Any) -> Engine:
    """An engine on ``path`` in WAL mode with synchronous=FULL, foreign keys and a busy timeout."""
    engine = create_engine(f"sqlite:///{path}", **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        # text changed outside Labrig into bytes that are not UTF-8 reads with U+FFFD in their
        # place (the default raises mid-query, in every command); 'labrig verify' reports such rows
        dbapi_conn.text_factory = _text_or_replaced
        dbapi_conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        dbapi_conn.execute("PRAGMA journal_mode = WAL")
        # NORMAL may roll back a committed transaction on power loss; FULL does not.
        dbapi_conn.execute("PRAGMA synchronous = FULL")
        dbapi_conn.execute("PRAGMA foreign_keys = ON")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        read_only = conn.get_execution_options().get(READ_ONLY_OPTION, False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine


def _text_or_replaced(stored: bytes) -> str:
    return stored.decode("utf-8", "replace")


def set_foreign_keys(dbapi_conn: sqlite3.Connection, on: bool) -> None:
    """Switch foreign keys (only effective outside a transaction)."""
    dbapi_conn.execute(f"PRAGMA foreign_keys = {'ON' if on else 'OFF'}")


def foreign_key_violations(dbapi_conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return list(dbapi_conn.execute("PRAGMA foreign_key_check").fetchall())


# -- the raw path: statements run on the driver connection itself (see
# labrig.store.database.RawTransaction) --


def begin_write(dbapi_conn: sqlite3.Connection) -> None:
    """Open a write transaction on a driver connection, as the engine's ``begin`` hook
    does for sessions."""
    dbapi_conn.execute("BEGIN IMMEDIATE")


def to_db_datetime(value: datetime | None) -> str | None:
    """An aware datetime as SQLAlchemy's SQLite ``DateTime`` stores it (naive UTC, microseconds), so
    raw statements and ORM sessions read and compare the same text."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetime given to a UTC column; pass an aware datetime")
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def from_db_datetime(value: str | None) -> datetime | None:
    """The inverse of :func:`to_db_datetime`: an aware UTC datetime."""
    return None if value is None else datetime.fromisoformat(value).replace(tzinfo=UTC)


# -- append-only tables: the database itself refuses to change or remove their rows --


def append_only_triggers(table: str, label: str, keys: Sequence[Sequence[str]]) -> list[str]:
    """DDL of the triggers that refuse UPDATE and DELETE on ``table`` (``label`` names its
    rows in the error).

    ``INSERT OR REPLACE`` deletes the row it conflicts with *without* firing delete
    triggers (unless recursive triggers are on, which another program's connection
    need not set), so a third trigger refuses an insert that meets an existing row
    on any of ``keys`` (the primary and unique keys). Raised as ``RAISE(ABORT)``,
    which the driver reports as ``sqlite3.IntegrityError``. A migration that
    rebuilds the table (batch mode) drops these with it and must create them again.
    """
    refuse = (
        "SELECT RAISE(ABORT, "
        "'LABRIG_APPEND_ONLY: {label} are append-only; nothing may {verb} them')"
    )
    clash = " OR ".join("(" + " AND ".join(f"{c} = NEW.{c}" for c in key) + ")" for key in keys)
    return [
        *(
            f"CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON {table} BEGIN "
            f"{refuse.format(label=label, verb=verb)}; END"
            for op, verb in (("UPDATE", "change"), ("DELETE", "remove"))
        ),
        f"CREATE TRIGGER IF NOT EXISTS {table}_no_replace BEFORE INSERT ON {table} WHEN EXISTS "
        f"(SELECT 1 FROM {table} WHERE {clash}) BEGIN "
        f"{refuse.format(label=label, verb='replace')}; END",
    ]


def drop_append_only_triggers(table: str) -> list[str]:
    return [f"DROP TRIGGER IF EXISTS {table}_no_{op}" for op in ("update", "delete", "replace")]


def fetch_stored_text(
    dbapi_conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()
) -> list[tuple[Any, ...]]:
    """Rows with every TEXT value as its stored bytes, undecoded: text altered outside Labrig into
    invalid UTF-8 is then evidence to report, not a crash of the reader."""
    previous = dbapi_conn.text_factory
    dbapi_conn.text_factory = bytes
    try:
        return list(dbapi_conn.execute(sql, params).fetchall())
    finally:
        dbapi_conn.text_factory = previous


def text_not_utf8(dbapi_conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """Every stored TEXT value that is not valid UTF-8, as (table, row key, column): text altered
    outside Labrig, which reads with U+FFFD in its place. Every table is read, raw."""
    tables = [
        row[0]
        for row in dbapi_conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    found = []
    for table in tables:
        columns = [row[1] for row in dbapi_conn.execute(f'PRAGMA table_info("{table}")')]
        keys = [row[1] for row in dbapi_conn.execute(f'PRAGMA table_info("{table}")') if row[5]]
        listed = ", ".join(f'"{c}", typeof("{c}")' for c in columns)
        key = ", ".join(f'"{k}"' for k in keys) or "rowid"
        for row in fetch_stored_text(dbapi_conn, f'SELECT {key}, {listed} FROM "{table}"'):
            width = len(keys) or 1
            values = row[width:]
            for n, column in enumerate(columns):
                value, kind = values[2 * n], values[2 * n + 1]
                if kind == b"text" and not _is_utf8(value):
                    shown_key = "/".join(
                        v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                        for v in row[:width]
                    )
                    found.append((table, shown_key, column))
    return found


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
