"""Leases on a monotonic clock, and the identity of the process that holds them.

A monotonic reading means something only on the machine and boot that took it,
so every lease stores its host and boot id beside the monotonic deadline. A
lease of this host from another boot, or of a process of this host that is no
longer alive, is void at once; a lease of another host is judged by its
wall-clock copy (across workstations the database clock decides).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from labrig.store import utcnow

BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id"


def read_boot_id() -> str:
    """An id that changes at every reboot: the kernel's on Linux,
    else derived from the boot time."""
    try:
        with open(BOOT_ID_FILE, encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        boot_time = time.time() - time.monotonic()
        return f"boot-{round(boot_time / 10)}"  # stable to ±10 s across readings of the same boot


def process_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists on this host."""
    if pid <= 0:
        return False
    if os.name == "nt":  # pragma: no cover - Windows
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # type: ignore[attr-defined]
        if not handle:
            return False
        ctypes.windll.kernel32.CloseHandle(handle)  # type: ignore[attr-defined]
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    """A killed process its parent has not reaped yet still answers kill(0) but works no more."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


@dataclass
class Clock:
    """Time and identity as the queue sees them; tests pass their own."""

    host: str = field(default_factory=socket.gethostname)
    boot_id: str = field(default_factory=read_boot_id)
    pid: int = field(default_factory=os.getpid)
    nonce: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    #: where the catalog has a clock of its own (PostgreSQL), wall-clock deadlines shared by
    #: workstations (leases of other hosts, retry times) are read from it; tests that drive time
    #: themselves turn this off
    database_time: bool = True

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return utcnow()

    @property
    def owner(self) -> str:
        return f"{self.host}:{self.pid}:{self.nonce}"

    def is_alive(self, pid: int) -> bool:
        return pid == self.pid or process_alive(pid)


@dataclass(frozen=True)
class LeaseTerms:
    seconds: float = 30.0

    @property
    def renew_every(self) -> float:
        """Workers renew at most every third of the lease."""
        return self.seconds / 3


def owner_pid(owner: str | None) -> int:
    try:
        return int((owner or "").split(":")[1])
    except (IndexError, ValueError):
        return -1


def lease_expired(
    clock: Clock,
    host: str | None,
    boot_id: str | None,
    owner: str | None,
    deadline_mono: float | None,
    expires_at: datetime | None,
    now: datetime | None = None,
) -> bool:
    """Whether a lease recorded with these facts no longer protects its holder.

    A lease of another host is judged by its wall-clock deadline against ``now``: the
    shared clock (the database's, on PostgreSQL) when the caller read it, else this
    workstation's.
    """
    if host == clock.host:
        if boot_id != clock.boot_id or not clock.is_alive(owner_pid(owner)):
            return True  # rebooted, or its process is gone: nobody can still be working under it
        return deadline_mono is None or clock.monotonic() >= deadline_mono
    return expires_at is None or (now or clock.now()) >= expires_at


def deadlines(clock: Clock, terms: LeaseTerms) -> tuple[float, datetime]:
    return clock.monotonic() + terms.seconds, clock.now() + timedelta(seconds=terms.seconds)
