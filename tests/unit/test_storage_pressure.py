"""Storage pressure levels from free space and minutes left, with hysteresis on the way down."""

from __future__ import annotations

from labrig.domain.storage import (
    GIB,
    PressureLevel,
    PressurePolicy,
    classify,
    minutes_left,
    next_level,
)

P = PressurePolicy()
L = PressureLevel


def test_levels_by_free_space_alone() -> None:
    assert [classify(g * GIB, 0, P) for g in (100, 40, 10, 2)] == [
        L.NORMAL,
        L.ELEVATED,
        L.HIGH,
        L.CRITICAL,
    ]


def test_the_data_rate_can_only_make_it_worse() -> None:
    rate = 1 * GIB / 60  # 1 GiB a minute
    assert minutes_left(100 * GIB, rate) == 100.0
    assert classify(100 * GIB, rate, P) is L.ELEVATED  # 100 minutes left < 120
    assert classify(25 * GIB, rate, P) is L.HIGH
    assert classify(4 * GIB, rate, P) is L.CRITICAL
    assert minutes_left(10, 0) is None


def test_rising_is_immediate_falling_needs_a_margin() -> None:
    assert next_level(L.NORMAL, 19 * GIB, 0, P) is L.HIGH
    assert next_level(L.HIGH, int(20.5 * GIB), 0, P) is L.HIGH  # only 2.5 % clear of 20 GiB: stays
    assert next_level(L.HIGH, 23 * GIB, 0, P) is L.ELEVATED  # 15 % clear: falls
    assert next_level(L.CRITICAL, 200 * GIB, 0, P) is L.NORMAL


def test_a_disk_hovering_at_a_threshold_does_not_flap() -> None:
    level = L.NORMAL
    seen = []
    for free in [19.9, 20.1, 19.95, 20.2, 19.9, 20.3]:
        level = next_level(level, int(free * GIB), 0, P)
        seen.append(level)
    assert seen == [L.HIGH] * 6
