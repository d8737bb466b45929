"""Storage pressure: how close the media volume is to full, as a level that gates capture and jobs.

The level is the worse of two readings: free space, and the minutes left at
the current data rate. It rises at once and falls only once the reading has
cleared the threshold by a margin (hysteresis), so a disk hovering at a
threshold does not flap between levels.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

GIB = 1024**3


class PressureLevel(IntEnum):
    NORMAL = 0
    ELEVATED = 1
    HIGH = 2
    CRITICAL = 3

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class PressurePolicy:
    """Thresholds of each level; a 720p60 MJPG recording writes roughly 0.3–1 GB a minute."""

    elevated_free: int = 50 * GIB
    high_free: int = 20 * GIB
    critical_free: int = 5 * GIB
    elevated_minutes: float = 120.0
    high_minutes: float = 30.0
    critical_minutes: float = 5.0
    hysteresis: float = 0.10  # a level falls only once the reading is 10 % clear of its threshold


def minutes_left(free_bytes: int, bytes_per_second: float) -> float | None:
    """Minutes until the volume is full at this rate; None when nothing is being written."""
    if bytes_per_second <= 0:
        return None
    return free_bytes / bytes_per_second / 60.0


def classify(
    free_bytes: float, bytes_per_second: float, policy: PressurePolicy = PressurePolicy()
) -> PressureLevel:
    by_free = _level(free_bytes, (policy.critical_free, policy.high_free, policy.elevated_free))
    left = minutes_left(int(free_bytes), bytes_per_second)
    by_rate = (
        PressureLevel.NORMAL
        if left is None
        else _level(left, (policy.critical_minutes, policy.high_minutes, policy.elevated_minutes))
    )
    return max(by_free, by_rate)


def _level(value: float, floors: tuple[float, float, float]) -> PressureLevel:
    critical, high, elevated = floors
    if value < critical:
        return PressureLevel.CRITICAL
    if value < high:
        return PressureLevel.HIGH
    if value < elevated:
        return PressureLevel.ELEVATED
    return PressureLevel.NORMAL


def next_level(
    previous: PressureLevel,
    free_bytes: int,
    bytes_per_second: float,
    policy: PressurePolicy = PressurePolicy(),
) -> PressureLevel:
    """The level after a new reading, with hysteresis on the way down."""
    now = classify(free_bytes, bytes_per_second, policy)
    if now >= previous:
        return now
    margin = 1.0 + policy.hysteresis
    cleared = classify(free_bytes / margin, bytes_per_second * margin, policy)
    return max(cleared, now) if cleared < previous else previous


def pressure_level(free_bytes: int, policy: PressurePolicy = PressurePolicy()) -> PressureLevel:
    """The level from free space alone (no recording running)."""
    return classify(free_bytes, 0.0, policy)


def human_bytes(count: int) -> str:
    """A byte count in decimal units, as disk vendors and file managers report free space."""
    value = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if abs(value) < 1000:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"
