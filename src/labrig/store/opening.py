"""One process at a time makes or migrates a catalog as it opens it.

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

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, text

from labrig.errors import StoreBusyError
from labrig.fsutil import FileLock
from labrig.store import paths

#: beside the SQLite catalog: held while a process makes or migrates it
OPENING_LOCK = paths.DB_FILENAME + ".opening"
#: PostgreSQL's advisory lock of a migration (two 32-bit keys: "LBRG", "MIGR")
_PG_LOCK = (0x4C425247, 0x4D494752)
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
def postgresql_migration(engine: Engine) -> Iterator[None]:
    """Hold the server's migration lock for this catalog database (waiting for another's)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("SELECT pg_advisory_lock(:a, :b)"), {"a": _PG_LOCK[0], "b": _PG_LOCK[1]})
        try:
            yield
        finally:
            conn.execute(
                text("SELECT pg_advisory_unlock(:a, :b)"), {"a": _PG_LOCK[0], "b": _PG_LOCK[1]}
            )
