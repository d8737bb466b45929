"""The storage monitor: measures the media volume, keeps the pressure level, gates capture and jobs.

A level change is recorded with ``storage.pressure.changed`` (and remembered in
the catalog, so a restart does not announce the same level again).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from labrig.capture.sources import Mode
from labrig.domain.events import EventName
from labrig.domain.storage import PressureLevel, PressurePolicy, minutes_left, next_level
from labrig.errors import LabrigError
from labrig.events.outbox import record_event
from labrig.store.database import Store
from labrig.store.models import Meta

LEVEL_KEY = "storage_pressure_level"
MJPG_BYTES_PER_PIXEL = 0.25  # generous: MJPG at quality 90 of a busy scene


class DiskUsage(NamedTuple):
    total: int
    used: int
    free: int


class StorageInsufficientError(LabrigError):
    code = "LABRIG_STORAGE_INSUFFICIENT"


@dataclass(frozen=True)
class Reading:
    level: PressureLevel
    free_bytes: int
    minutes_left: float | None
    changed: bool


def estimated_rate(mode: Mode) -> float:
    """Bytes per second a recording in ``mode`` writes, estimated on the high side."""
    return mode.width * mode.height * mode.fps * MJPG_BYTES_PER_PIXEL


class StorageMonitor:
    """Threading: ``sample`` may be called from any thread (it serialises itself)."""

    def __init__(self, store: Store, policy: PressurePolicy | None = None,
                 disk_usage: Callable[[Path], DiskUsage] | None = None) -> None:
        self.store, self.policy = store, policy or PressurePolicy()
        self._disk_usage = disk_usage or (lambda p: DiskUsage(*shutil.disk_usage(p)))
        self._lock = threading.Lock()
        stored = store.meta(LEVEL_KEY)
        self.level = PressureLevel[stored.upper()] if stored else PressureLevel.NORMAL

    def usage(self) -> DiskUsage:
        """Total, used and free bytes of the volume holding the media folder."""
        return self._disk_usage(self.store.media_dir)

    def free_bytes(self) -> int:
        return self.usage().free

    def sample(self, bytes_per_second: float = 0.0) -> Reading:
        """Measure now; record a level change with its event."""
        with self._lock:
            free = self.free_bytes()
            new = next_level(self.level, free, bytes_per_second, self.policy)
            left = minutes_left(free, bytes_per_second)
            changed = new is not self.level
            if changed:
                self._record(new, free, left)
            return Reading(new, free, left, changed)

    def _record(self, new: PressureLevel, free: int, left: float | None) -> None:
        with self.store.write() as session:
            record_event(session, EventName.STORAGE_PRESSURE_CHANGED, {
                "volume": str(self.store.media_dir), "previous_level": self.level.label, "level": new.label,
                "free_bytes": free, "minutes_left": left})
            row = session.get(Meta, LEVEL_KEY)
            if row is None:
                session.add(Meta(key=LEVEL_KEY, value=new.label))
            else:
                row.value = new.label
        self.level = new

    def check_capture(self, mode: Mode, planned_seconds: float) -> None:
        """Refuse, before it starts, a capture that cannot fit above the critical floor."""
        reading = self.sample()
        need = estimated_rate(mode) * planned_seconds
        room = reading.free_bytes - self.policy.critical_free
        if reading.level is PressureLevel.CRITICAL or need > room:
            raise StorageInsufficientError(
                f"a {planned_seconds:.0f} s recording at {mode.label()} needs about {need / 1e9:.1f} GB but only "
                f"{max(room, 0) / 1e9:.1f} GB are free above the safety floor; free disk space, or record shorter")

    def heavy_jobs_paused(self) -> bool:
        """Jobs that write large outputs wait while pressure is high or critical."""
        return self.level >= PressureLevel.HIGH
