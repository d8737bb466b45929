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

from labrig.domain.events import EventName
from labrig.domain.storage import PressureLevel, PressurePolicy, minutes_left, next_level
from labrig.errors import LabrigError
from labrig.events import record_event
from labrig.store import Store
from labrig.store.models import Meta

LEVEL_KEY = "storage_pressure_level"


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


class StorageMonitor:
    """Threading: ``sample`` may be called from any thread (it serialises itself)."""

    def __init__(
        self,
        store: Store,
        policy: PressurePolicy | None = None,
        disk_usage: Callable[[Path], DiskUsage] | None = None,
    ) -> None:
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
            record_event(
                session,
                EventName.STORAGE_PRESSURE_CHANGED,
                {
                    "volume": str(self.store.media_dir),
                    "previous_level": self.level.label,
                    "level": new.label,
                    "free_bytes": free,
                    "minutes_left": left,
                },
            )
            row = session.get(Meta, LEVEL_KEY)
            if row is None:
                session.add(Meta(key=LEVEL_KEY, value=new.label))
            else:
                row.value = new.label
        self.level = new

    def check_capture(
        self, bytes_per_second: float, planned_seconds: float, what: str = ""
    ) -> None:
        """Refuse, before it starts, a capture writing ``bytes_per_second`` (its estimate on the
        high side) for ``planned_seconds`` that cannot fit above the critical floor; ``what`` names
        it in the refusal."""
        reading = self.sample()
        need = bytes_per_second * planned_seconds
        room = reading.free_bytes - self.policy.critical_free
        if reading.level is PressureLevel.CRITICAL or need > room:
            at = f" at {what}" if what else ""
            raise StorageInsufficientError(
                f"a {planned_seconds:.0f} s recording{at} needs about {need / 1e9:.1f} GB but only "
                f"{max(room, 0) / 1e9:.1f} GB are free above the safety floor; free disk space, or "
                "record shorter"
            )

    def heavy_jobs_paused(self) -> bool:
        """Jobs that write large outputs wait while pressure is high or critical."""
        return self.level >= PressureLevel.HIGH
