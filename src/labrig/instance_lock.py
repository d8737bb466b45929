"""One window per data folder: an exclusive lock on ``<store>/labrig.lock`` held while the GUI runs.

Two windows on one store would both recover "abandoned" recordings at start-up (one of them the
other's recording in progress) and both offer the same devices. Headless workers (``labrig
worker``) share a store by design and take no lock; only the window does.

The lock is the operating system's (``flock`` on POSIX, ``msvcrt.locking`` on Windows), so it
is released when the holder exits or dies: a crash never leaves a stale lock behind. The file's
content only says who holds it, for the refusal message; it is never what decides.

Threading: acquire and release from one thread (the GUI's main thread).
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import sys
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from labrig.errors import StoreError

LOCK_FILENAME = "labrig.lock"
# Windows locks byte ranges and a locked range cannot be read by others: lock one byte far past
# the holder's description, so a refused instance can still read who holds the lock.
_WINDOWS_LOCK_OFFSET = 1 << 20


class StoreInUseError(StoreError):
    """Another Labrig window has this data folder open."""

    code = "LABRIG_STORE_IN_USE"


@dataclass(frozen=True)
class Holder:
    """Who holds the lock, as written into the lock file (JSON)."""

    pid: int  # process id of the window that holds the store
    host: str  # computer it runs on (the store may be on a disk two computers see)
    user: str  # operating-system login that started it
    since: str  # UTC time the window took the lock, ISO 8601

    @classmethod
    def me(cls) -> Holder:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):  # no login name (a service account without a passwd entry)
            user = "unknown"
        return cls(
            os.getpid(), socket.gethostname(), user, datetime.now(UTC).isoformat(timespec="seconds")
        )

    def describe(self) -> str:
        return f"process {self.pid} of user {self.user} on {self.host}, since {self.since}"


class InstanceLock:
    """The lock on one data folder. ``acquire`` raises :class:`StoreInUseError` when it is taken."""

    def __init__(self, root: Path, shared_catalog: bool = False) -> None:
        """``shared_catalog``: the catalog is on PostgreSQL and ``root`` is the lab's shared media
        folder, where every workstation runs its own window: the lock is then one per workstation
        (its host name)."""
        self.root = root
        name = f"labrig-{_safe_host()}.lock" if shared_catalog else LOCK_FILENAME
        self.path = root / name
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _lock(fd)
        except OSError as exc:
            os.close(fd)
            raise StoreInUseError(self._refusal()) from exc
        self._fd = fd
        text = json.dumps(asdict(Holder.me())).encode()
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, text)

    def release(self) -> None:
        """Forget the holder and unlock; the file stays (deleting it would race a new holder)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing releases the lock

    def holder(self) -> Holder | None:
        """Who the lock file says holds the lock; None when it says nothing readable."""
        try:
            data = json.loads(self.path.read_bytes() or b"null")
            return Holder(**data) if isinstance(data, dict) else None
        except (OSError, ValueError, TypeError):
            return None

    def _refusal(self) -> str:
        holder = self.holder()
        who = holder.describe() if holder else "another process (it has not written its name yet)"
        return (
            f"the data folder {self.root} is already open in another Labrig window: {who}. Switch "
            "to that window, or close it and start Labrig again. To work on two stores at once, "
            "start the second with --store DIR. Nothing was changed"
        )

    def __enter__(self) -> InstanceLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _lock(fd: int) -> None:
    """Lock ``fd`` without waiting; OSError when another process holds it."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _safe_host() -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in socket.gethostname()) or "host"
