"""Opening a catalog: the refusals before anything is made or changed (:func:`check_openable`),
and one process at a time making or migrating a catalog.

Several processes may open one catalog at the same moment: the worker services a workstation
starts at boot, a window and a worker after an upgrade. Each used to find a new (or older)
catalog unmigrated and migrate it: on SQLite the second then failed, with ``database is locked``
(it switched the new file to WAL while the first wrote) or a table that was there already, and
was told its catalog was corrupt and to restore it from a backup. Now a catalog that its check
found new or older is migrated one process at a time: on SQLite under a lock on a file beside
the catalog (the operating system's, released if its holder dies; the file is made then and
stays), on PostgreSQL under an advisory lock of the server's. Whoever comes second reads the
schema's revision again under the lock, finds this build's and migrates nothing. Opening an
up-to-date catalog takes no lock, and a refused one is refused before any is taken.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from labrig.errors import (
    CatalogMissingError,
    DatabaseCorruptError,
    StoreBusyError,
    UnsupportedDatabaseError,
)
from labrig.fsutil import FileLock
from labrig.store import migrate, paths
from labrig.store.dialects import postgresql as pg_dialect
from labrig.store.dialects import sqlite as sqlite_dialect

#: beside the SQLite catalog: held while a process makes or migrates it
OPENING_LOCK = paths.DB_FILENAME + ".opening"
#: PostgreSQL's advisory locks (classes numbered with the others in labrig.store.dialects): a
#: migration's, and the writing of a new catalog's meta rows (taken by the migrating process too,
#: on another connection, so it cannot be the migration's)
_PG_MIGRATION_LOCK = 7340003
_PG_META_LOCK = 7340004
#: how long an opening waits for another process's (a migration of a large catalog can take
#: minutes; a crashed holder releases the lock at once)
WAIT_S = 600.0
_POLL_S = 0.02


@contextmanager
def sqlite_migration(root: Path, wait_s: float = WAIT_S) -> Iterator[None]:
    """Hold the SQLite catalog's migration lock in ``root`` (waiting for another process's)."""
    lock = FileLock(root / OPENING_LOCK)
    deadline = time.monotonic() + wait_s
    while not lock.acquire():
        if time.monotonic() > deadline:
            raise StoreBusyError(
                f"another Labrig process has been opening the catalog in {root} for "
                f"{wait_s:.0f} s (migrating it, or checking a damaged file); wait for it to "
                "finish, or stop it, and start this command again; nothing was changed"
            )
        time.sleep(_POLL_S)
    try:
        yield
    finally:
        lock.release()


@contextmanager
def postgresql_migration(engine: Engine, wait_s: float = WAIT_S) -> Iterator[None]:
    """Hold the server's migration lock for this catalog database (waiting for another's)."""
    keys = {"key": _PG_MIGRATION_LOCK}
    conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    try:
        conn.execute(text(f"SET lock_timeout = '{int(wait_s * 1000)}ms'"))
        try:
            conn.execute(text("SELECT pg_advisory_lock(:key)"), keys)
        except OperationalError as exc:
            if getattr(exc.orig, "sqlstate", None) != "55P03":  # lock_not_available
                raise
            raise StoreBusyError(
                f"another Labrig process has been migrating this catalog for {wait_s:.0f} s; wait "
                "for it to finish, or stop it, and start this command again; nothing was changed"
            ) from exc
        yield
    finally:
        # closing the session releases the lock too: an unlock that fails (the server gone, which
        # may be why the opening failed) must not hide what did
        with contextlib.suppress(Exception):
            conn.execute(text("SELECT pg_advisory_unlock(:key)"), keys)
        with contextlib.suppress(Exception):
            # not back to the pool: its lock_timeout is this wait's, and a failed opening may
            # have disposed of the pool
            conn.invalidate()
        conn.close()


def meta_written_alone(session: Session) -> None:
    """In a write session on PostgreSQL: wait for any other process writing a new catalog's meta
    rows, so the rows are read again after its commit (on SQLite, BEGIN IMMEDIATE does it)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_META_LOCK})


def check_openable(
    root: str | Path | None = None, db: str | None = None, *, allow_missing_catalog: bool = False
) -> None:
    """Raise the typed refusal :func:`open_store` would raise, creating nothing in the data folder.

    The refusals: an unwritable root, an SQLite catalog on a network filesystem, a ``db`` that is
    not a PostgreSQL URL or cannot be reached, a corrupt or foreign database, a schema newer than
    this build, and a missing or empty catalog beside committed captures. For the window, which
    must refuse before it creates its lock file.
    """
    resolved, url = locate(root, db)
    if url is None:
        check_sqlite_catalog(resolved, allow_missing_catalog)
        return
    engine = pg_dialect.create_postgresql_engine(url)
    try:
        check_postgresql_catalog(resolved, engine, url, allow_missing_catalog)
    finally:
        engine.dispose()


def locate(root: str | Path | None, db: str | None) -> tuple[Path, str | None]:
    """The data root, proven writable, and the PostgreSQL URL of its catalog (None: SQLite)."""
    resolved = paths.resolve_root(root)
    paths.ensure_writable(resolved)
    url = db or os.environ.get(paths.DB_ENV_VAR) or None
    if url is not None and not pg_dialect.is_postgresql_url(url):
        raise UnsupportedDatabaseError(
            "--db takes a PostgreSQL URL such as postgresql+psycopg://labrig@server/labrig, "
            f"not '{url.split('://', 1)[0]}://…'; leave it out to keep the catalog in the data "
            "folder"
        )
    return resolved, url


def check_sqlite_catalog(root: Path, allow_missing: bool) -> tuple[Path, str | None]:
    """Refuse the SQLite catalog of ``root`` as :func:`check_openable` says; its path and its
    schema's revision (None: none yet)."""
    paths.refuse_network_filesystem(root)
    db_path = root / paths.DB_FILENAME
    with sqlite_dialect.as_found_if_refused(db_path):
        facts = sqlite_dialect.inspect_file(db_path)
        migrate.refuse_unknown_revision(facts.revision, str(db_path))
        if not facts.tables and not allow_missing:
            what = f"{db_path} is missing or empty"
            _refuse_missing_catalog(root, what, f"restore {db_path.name}")
    return db_path, facts.revision


def check_sqlite_catalog_alone(root: Path, allow_missing: bool) -> tuple[Path, str | None]:
    """:func:`check_sqlite_catalog` again, holding the migration lock: a check that read the file
    while another process migrated it may have taken it for damaged. A catalog refused again is
    refused as found (the lock's file removed if this made it)."""
    lock_file = root / OPENING_LOCK
    made = not lock_file.exists()
    try:
        with sqlite_migration(root):
            return check_sqlite_catalog(root, allow_missing)
    except DatabaseCorruptError:
        if made:
            lock_file.unlink(missing_ok=True)
        raise


def check_postgresql_catalog(
    root: Path, engine: Engine, url: str, allow_missing: bool
) -> str | None:
    """Refuse the PostgreSQL catalog at ``url`` as :func:`check_openable` says; its schema's
    revision (None: none yet)."""
    facts = pg_dialect.inspect_database(engine, url)
    where = pg_dialect.redacted(url)
    migrate.refuse_unknown_revision(facts.revision, where)
    if not facts.tables and not allow_missing:
        _refuse_missing_catalog(
            root, f"the catalog database at {where} is empty", "restore the database"
        )
    return facts.revision


def _refuse_missing_catalog(root: Path, what: str, restore: str) -> None:
    """Refuse to start a new catalog when the media folder holds committed captures: they would
    vanish from it, and new recordings would be catalogued apart from them."""
    committed = paths.committed_manifests(root)
    if committed:
        media = root / paths.MEDIA_DIRNAME
        raise CatalogMissingError(
            f"{what} but the media folder {media} holds {committed} committed "
            f"capture{'s' if committed != 1 else ''}. Run 'labrig recover --adopt' to rebuild the "
            f"catalog from the media folder (or {restore} from a backup); nothing was changed"
        )
