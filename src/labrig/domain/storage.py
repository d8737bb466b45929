"""Storage pressure: how full the media volume is, as a level that gates capture and jobs."""

from __future__ import annotations

from enum import StrEnum

GIB = 1024**3


class PressureLevel(StrEnum):
    OK = "ok"
    LOW = "low"
    CRITICAL = "critical"
    FULL = "full"


# Free-space floors of each level; a 720p60 MJPG recording writes ~0.5 GB a minute.
DEFAULT_THRESHOLDS: dict[PressureLevel, int] = {
    PressureLevel.LOW: 20 * GIB,
    PressureLevel.CRITICAL: 5 * GIB,
    PressureLevel.FULL: 1 * GIB,
}


def pressure_level(free_bytes: int, thresholds: dict[PressureLevel, int] | None = None) -> PressureLevel:
    """The level for ``free_bytes`` free: FULL below 1 GiB, CRITICAL below 5, LOW below 20 by default."""
    limits = thresholds or DEFAULT_THRESHOLDS
    for level in (PressureLevel.FULL, PressureLevel.CRITICAL, PressureLevel.LOW):
        if free_bytes < limits[level]:
            return level
    return PressureLevel.OK
