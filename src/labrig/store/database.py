"""Opening the catalog: refuse what is not ours, migrate, hand out sessions.

Threading: a :class:`Store` is shared; each thread opens its own sessions
(``with store.write() as s:``), never sharing one across threads.
"""

from __future__ import annotations

import shutil
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, PoolProxiedConnection, event, select
from sqlalchemy.exc import DatabaseError
from sqlalchemy.orm import Session, sessionmaker

from labrig.errors import (
    CatalogDamagedError,
    DatabaseCorruptError,
    ReadOnlySessionError,
)
from labrig.fsutil import DiskFullError, disk_full, full_disk
from labrig.store import damage, migrate, opening, paths
from labrig.store.dialects import RawDialect, raw_dialect
from labrig.store.dialects import postgresql as pg_dialect
from labrig.store.dialects import sqlite as sqlite_dialect
from labrig.store.models import Meta
from labrig.store.opening import (
    check_postgresql_catalog,
    check_sqlite_catalog,
    locate,
)
from labrig.store.types import utcnow

APP_MARKER = "labrig"
# session.info key counting events recorded in the open transaction
EVENTS_IN_TRANSACTION = "labrig_events_recorded"


class RawTransaction:
    """Statements run on the driver connection itself, inside a write transaction.

    For the queue's hot paths (enqueue, claim, complete), where SQLAlchemy's
    execution layer cost more CPU than the statements themselves. The SQL is the
    dialect's own text with named parameters; datetimes are converted with
    :func:`~labrig.store.dialects.sqlite.to_db_datetime` so the ORM reads the
    same values. Either a transaction of its own (:meth:`Store.raw_write`) or the
    transaction of an open write session (:meth:`Store.raw_in`), so raw and ORM
    statements can commit together.
    """

    def __init__(
        self, dbapi_conn: Any, dialect: RawDialect, session: Session | None = None
    ) -> None:
        self._conn = dbapi_conn
        self.dialect = dialect
        self._session = session
        self.events_recorded = 0
        #: the database's clock, once read in this transaction (PostgreSQL's ``now()`` is the
        #: transaction's start, so one read serves every statement of it)
        self.db_now: Any = None

    def execute(self, sql: str, params: Mapping[str, Any] | Sequence[Any] | None = None) -> Any:
        """Run ``sql`` (in the driver's parameter style); the cursor, to fetch from."""
        cursor = self._conn.cursor()
        cursor.execute(sql, params if params is not None else ())
        return cursor

    def executemany(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> int:
        """Run ``sql`` once per row; the number of rows changed in total."""
        cursor = self._conn.cursor()
        cursor.executemany(sql, rows)
        return int(cursor.rowcount)

    def mappings(
        self, sql: str, params: Mapping[str, Any] | Sequence[Any] | None = None
    ) -> list[dict[str, Any]]:
        """The result rows as column → value dictionaries."""
        cursor = self.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def events_added(self, count: int) -> None:
        """Note outbox rows written here, so commit listeners fire as for ``record_event``."""
        if self._session is not None:
            self._session.info[EVENTS_IN_TRANSACTION] = (
                self._session.info.get(EVENTS_IN_TRANSACTION, 0) + count
            )
        else:
            self.events_recorded += count


@dataclass
class Store:
    """The data root and its catalog database."""

    root: Path
    engine: Engine
    _writer: sessionmaker[Session]
    _reader: sessionmaker[Session]
    _commit_listeners: list[Callable[[], None]] = field(default_factory=list)
    #: one writer at a time in this process: a waiting thread gets the lock as soon as it is free,
    #: instead of sleeping in SQLite's busy handler (other processes still use the busy timeout)
    _write_lock: threading.RLock = field(default_factory=threading.RLock)
    #: the connection :meth:`raw_write` uses, checked out of the pool once
    #: (guarded by ``_write_lock``)
    _raw_conn: PoolProxiedConnection | None = None
    #: the catalog's ``store_id`` (labrig_meta), once its meta rows are written at open
    store_id: str | None = None
    #: damage a page check recorded beside an SQLite catalog (:mod:`labrig.store.damage`)
    _damage: damage.MarkerWatch | None = None

    def on_events_committed(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after each commit that recorded events (in the committing thread)."""
        self._commit_listeners.append(listener)

    def _after_commit(self, session: Session) -> None:
        if session.info.pop(EVENTS_IN_TRANSACTION, 0):
            for listener in list(self._commit_listeners):
                listener()

    @property
    def dialect(self) -> str:
        """The catalog's database: ``sqlite`` (a file in the data folder) or ``postgresql``
        (a shared server)."""
        return self.engine.dialect.name

    @property
    def raw_dialect(self) -> RawDialect:
        return raw_dialect(self.dialect)

    @property
    def db_path(self) -> Path:
        return self.root / paths.DB_FILENAME

    @property
    def media_dir(self) -> Path:
        return self.root / paths.MEDIA_DIRNAME

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session in a write transaction (``BEGIN IMMEDIATE`` on SQLite), committed on exit.

        On SQLite, write transactions of one store are serialized by a process-wide lock
        (re-entrant, so a thread that already writes may open another write session, as before):
        there is one writer per database anyway, and a waiting thread gets it as soon as it is free.
        PostgreSQL's write transactions run side by side, each on its own connection (a worker's
        result publisher and its executor do not wait for each other); what must be one at a time
        there takes a lock in the database (claims, fences, advisory locks).
        """
        self.refuse_if_damaged()
        serial = self._write_lock if self.dialect == "sqlite" else nullcontext()
        with serial, self._writer() as session, session.begin():
            yield session

    @contextmanager
    def raw_write(self) -> Iterator[RawTransaction]:
        """A write transaction on the store's raw-write connection, without a Session;
        committed on exit.

        Serialized with :meth:`write` by the same lock, which also guards the one
        connection kept for raw writes (checking a connection out of the pool and
        resetting it on return cost a quarter of a small transaction's CPU). Commit
        listeners fire after a commit that recorded events, as for sessions.
        """
        self.refuse_if_damaged()
        with self._write_lock:
            if self._raw_conn is None:
                self._raw_conn = self.engine.raw_connection()
            conn: Any = self._raw_conn.driver_connection
            tx = RawTransaction(conn, self.raw_dialect)
            try:
                tx.dialect.begin_write(conn)
                yield tx
                conn.commit()
            except BaseException:
                try:
                    conn.rollback()
                except Exception:  # noqa: BLE001 - the connection itself failed: replace it before the next write
                    self._drop_raw_conn()
                raise
        if tx.events_recorded:
            for listener in list(self._commit_listeners):
                listener()

    def damage(self) -> CatalogDamagedError | None:
        """The refusal of every write while damage is recorded for this catalog
        (``labrig.db.damaged``, written when SQLite's integrity check failed), else None."""
        return self._damage.refusal(self.store_id) if self._damage is not None else None

    def refuse_if_damaged(self) -> None:
        """Raise :meth:`damage`, if any: before every write, and before a command stores a file."""
        if refusal := self.damage():
            raise refusal

    def recheck_damage(self) -> None:
        """Look for the marker again at the next write (it was just written or removed here)."""
        if self._damage is not None:
            self._damage.expire()

    def _drop_raw_conn(self) -> None:
        """Drop the raw-write connection (invalidated: its state is unknown); the next write
        makes a new one."""
        if self._raw_conn is not None:
            self._raw_conn.invalidate()
            self._raw_conn = None

    def raw_in(self, session: Session) -> RawTransaction:
        """Raw statements in ``session``'s (write) transaction, after its pending ORM
        changes are flushed.

        The session's identity map does not see what raw statements change: expire
        the objects concerned before reading them through the ORM again.
        """
        session.flush()
        return RawTransaction(
            session.connection().connection.driver_connection, self.raw_dialect, session
        )

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only session (plain ``BEGIN``); any flush in it raises
        :class:`ReadOnlySessionError`."""
        with self._reader() as session:
            try:
                yield session
            finally:
                session.expunge_all()  # what was read stays readable after the session ends
                session.rollback()

    def text_not_utf8(self) -> list[tuple[str, str, str]]:
        """Stored text that is not valid UTF-8, as (table, row key, column); none on PostgreSQL,
        whose server refuses such text."""
        if self.dialect != "sqlite":
            return []
        with self.engine.connect() as conn:
            driver: Any = conn.connection.driver_connection
            return sqlite_dialect.text_not_utf8(driver)

    def meta(self, key: str) -> str | None:
        with self.read() as session:
            return session.scalar(select(Meta.value).where(Meta.key == key))

    def revision(self) -> str | None:
        with self.engine.connect() as conn:
            return conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()

    def close(self) -> None:
        with self._write_lock:
            if self._raw_conn is not None:
                self._raw_conn.close()
                self._raw_conn = None
        self.engine.dispose()


def _refuse_flush(session: Session, _ctx: Any, _instances: Any) -> None:
    if session.new or session.dirty or session.deleted:
        raise ReadOnlySessionError(
            "a change was made through a read-only session; open it with store.write()"
        )


def open_store(
    root: str | Path | None = None, db: str | None = None, *, allow_missing_catalog: bool = False
) -> Store:
    """Open (creating and migrating if needed) the store at ``root``, its catalog in
    ``db`` if given.

    ``db`` (else ``$LABRIG_DB``) is a ``postgresql+psycopg://`` URL for a catalog and
    queue shared by several workstations; the media stay in ``root``, a shared folder.
    Without it the catalog is SQLite in ``root``, which is refused on a network
    filesystem. Refuses, with a typed error and without modifying anything, what
    :func:`check_openable` refuses. ``allow_missing_catalog`` creates a new catalog even beside
    committed captures (``labrig recover --adopt``, which then rebuilds it from them).
    """
    resolved, url = locate(root, db)
    # a catalog to make or migrate is migrated by one process at a time (labrig.store.opening)
    to_migrate: AbstractContextManager[None] = nullcontext()
    if url is None:
        try:
            db_path, revision = check_sqlite_catalog(resolved, allow_missing_catalog)
        except DatabaseCorruptError:  # read while another process migrated it?
            db_path, revision = opening.check_sqlite_catalog_alone(resolved, allow_missing_catalog)
        engine, where = sqlite_dialect.create_sqlite_engine(db_path), str(db_path)
        if revision != migrate.head_revision():
            to_migrate = opening.sqlite_migration(resolved)
        # a refusal here (a full disk) leaves no -wal or -shm behind either
        with to_migrate, sqlite_dialect.as_found_if_refused(db_path):
            return _migrated(resolved, engine, where, revision)
    engine, where = pg_dialect.create_postgresql_engine(url), pg_dialect.redacted(url)
    try:
        revision = check_postgresql_catalog(resolved, engine, url, allow_missing_catalog)
        if revision != migrate.head_revision():
            to_migrate = opening.postgresql_migration(engine)
    except BaseException:
        engine.dispose()
        raise
    with to_migrate:
        return _migrated(resolved, engine, where, revision)


def _migrated(resolved: Path, engine: Engine, where: str, revision: str | None) -> Store:
    """The store on ``engine``, its schema (found at ``revision`` by the check) migrated to this
    build's and its meta rows written."""
    try:
        migrate.upgrade(engine, found=revision)
        store = _make_store(resolved, engine)
        store.store_id = _ensure_meta(store)["store_id"]
    except DatabaseError as exc:
        engine.dispose()
        if full := _full_disk(exc, resolved):
            raise full from exc
        raise DatabaseCorruptError(
            f"{where} could not be opened ({exc.orig}); restore it from a backup"
        ) from exc
    except BaseException:
        engine.dispose()
        raise
    store.media_dir.mkdir(exist_ok=True)
    return store


#: below this, a write that fails at open is taken for a full disk: SQLite reports a WAL index it
#: cannot extend as a plain I/O error, not as SQLITE_FULL
NEARLY_FULL_BYTES = 1 << 20


def _full_disk(exc: DatabaseError, root: Path) -> DiskFullError | None:
    """The refusal for a catalog that could not be opened because its disk is full (it is not
    damaged: telling the user to restore a backup would be wrong)."""
    what = f"the catalog in {root} could not be opened for writing; nothing was changed"
    if full := disk_full(exc, what):
        return full
    try:
        nearly_full = shutil.disk_usage(root).free < NEARLY_FULL_BYTES
    except OSError:
        return None
    return full_disk(what) if nearly_full else None


def _make_store(root: Path, engine: Engine) -> Store:
    writer = sessionmaker(engine, expire_on_commit=False)
    reader = sessionmaker(
        engine.execution_options(**{sqlite_dialect.READ_ONLY_OPTION: True}), expire_on_commit=False
    )
    event.listen(reader, "before_flush", _refuse_flush)
    # damage is recorded beside an SQLite catalog only: PostgreSQL checks its own pages
    watch = damage.MarkerWatch(root) if engine.dialect.name == "sqlite" else None
    store = Store(root, engine, writer, reader, _damage=watch)
    event.listen(writer, "after_commit", store._after_commit)
    event.listen(writer, "after_rollback", lambda s: s.info.pop(EVENTS_IN_TRANSACTION, None))
    return store


def _ensure_meta(store: Store) -> dict[str, str]:
    """The catalog's meta rows, those missing written first (a new catalog): read before anything
    is written, so an open of a catalog that has them writes nothing."""
    with store.read() as session:
        existing = {m.key: m.value for m in session.scalars(select(Meta))}
    defaults = {
        "app": APP_MARKER,
        "store_id": str(uuid.uuid4()),
        "created_at": utcnow().isoformat(),
    }
    if defaults.keys() <= existing.keys():
        return existing
    with store.write() as session:
        opening.meta_written_alone(session)  # two new opens at once: one writes them
        existing = {m.key: m.value for m in session.scalars(select(Meta))}
        missing = {k: v for k, v in defaults.items() if k not in existing}
        session.add_all(Meta(key=k, value=v) for k, v in missing.items())
    return existing | missing
