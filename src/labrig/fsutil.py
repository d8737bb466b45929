"""Durable file operations: what "saved" means on disk.

A rename is durable only once its directory is fsynced; a file's bytes only
once the file is. Every write Labrig calls durable goes through here.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
from pathlib import Path
from typing import IO, BinaryIO

from labrig.errors import LabrigError

CHUNK = 1 << 20


class NotARegularFileError(LabrigError):
    """Something other than a file (a folder, a FIFO, a device) stands where a file belongs."""

    code = "LABRIG_NOT_A_REGULAR_FILE"


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading, only when it is a regular file.

    Opened without blocking first, so a FIFO put where a file belongs is refused at once instead of
    waiting for a writer for ever, and a folder or a device is refused too
    (:class:`NotARegularFileError`); a missing file raises ``FileNotFoundError`` as ``open`` does.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except (IsADirectoryError, PermissionError) as exc:
        if not Path(path).is_dir():
            raise
        raise _not_regular(path, "folder") from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "folder" if stat.S_ISDIR(mode) else "FIFO" if stat.S_ISFIFO(mode) else "device"
        raise _not_regular(path, kind)
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


class DiskFullError(LabrigError):
    """The disk of the data folder (or of a destination) has no room left for a write."""

    code = "LABRIG_DISK_FULL"


_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG}
SQLITE_FULL = 13  # "database or disk is full"
PG_DISK_FULL = "53100"


def disk_full(exc: BaseException, what: str) -> DiskFullError | None:
    """The typed refusal for ``exc`` when it says a disk is full (an ``OSError`` ENOSPC, EDQUOT or
    EFBIG; SQLite's SQLITE_FULL; PostgreSQL's disk_full, directly or as the ``orig`` of a
    SQLAlchemy error), else None. ``what`` says what was being done and what was kept."""
    cause = getattr(exc, "orig", None) or exc
    full = (
        (isinstance(cause, OSError) and no_room(cause))
        or getattr(cause, "sqlite_errorcode", None) == SQLITE_FULL
        or getattr(cause, "sqlstate", None) == PG_DISK_FULL
    )
    return full_disk(what) if full else None


def no_room(exc: OSError) -> bool:
    """Whether ``exc`` says a write found no room: the disk full, the user's quota spent, or a file
    over the size the system allows."""
    return exc.errno in _FULL_ERRNOS


def full_disk(what: str) -> DiskFullError:
    """The refusal of a write the full disk stopped; ``what`` says what was being done and what
    was kept."""
    return DiskFullError(f"the disk is full: {what}. Free disk space and try again")


def require_regular(path: Path) -> None:
    """Refuse (:class:`NotARegularFileError`) a folder, FIFO or device at ``path``; nothing for a
    regular file or for nothing there at all. For paths handed to a library that opens them itself
    (OpenCV), which would wait on a FIFO for ever."""
    try:
        with open_regular(path):
            pass
    except FileNotFoundError:
        return


def shown(path: Path | str) -> str:
    """``path`` as text a message can always print: bytes of a name that are not UTF-8 (Python
    gives them as lone surrogates, which no terminal encoding accepts) shown as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _not_regular(path: Path, kind: str) -> NotARegularFileError:
    return NotARegularFileError(
        f"{shown(path)} is a {kind}, not a file: something replaced the file Labrig keeps there. "
        "Remove it and restore the file from a backup or the archive; nothing was changed"
    )


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Make the directory's entries (creations, renames) durable; a no-op where the OS cannot."""
    if os.name == "nt":  # pragma: no cover - NTFS journals metadata; directories cannot be opened
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves either the old or the new
    file, whole."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except (
        BaseException
    ):  # a full disk: the old file stays whole, and no half-written copy beside it
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def sha256_file(path: Path) -> tuple[str, int]:
    """The SHA-256 hex digest and size of a file, read in 1 MiB chunks; refused
    (:class:`NotARegularFileError`) when something else stands at ``path``."""
    digest = hashlib.sha256()
    size = 0
    with open_regular(path) as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


class FileLock:
    """An exclusive advisory lock on the file ``path``, released by the OS if the holder dies.
    Two holders in one process conflict too (each opens the file anew)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[bytes] | None = None

    def acquire(self) -> bool:
        """Take the lock without waiting; False when another process holds it."""
        fh = open(self.path, "a+b")  # noqa: SIM115 - held open for the life of the lock
        try:
            _lock(fh)
        except OSError:
            fh.close()
            return False
        self._fh = fh
        return True

    def release(self) -> None:
        if self._fh is not None:
            _unlock(self._fh)
            self._fh.close()
            self._fh = None


class FolderLock(FileLock):
    """An exclusive advisory lock on ``folder/.lock``.

    Recovery uses it to tell a capture still being recorded (locked) from one
    left behind by a crash (unlocked).
    """

    def __init__(self, folder: Path) -> None:
        super().__init__(folder / ".lock")


def _lock(fh: IO[bytes]) -> None:
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        fh.seek(0)  # the first byte, whatever the file holds ("a+b" opens at its end)
        msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def _unlock(fh: IO[bytes]) -> None:
    """Release the lock before the file is closed: Windows unlocks a closed file's locks only
    when it gets round to it, so the next holder could be refused meanwhile; on POSIX closing
    releases it at once (and so does this)."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
