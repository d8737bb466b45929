"""Frames matched across a rig's cameras: spread, unmatched frames, drift and the gate, on frame
times made here with known offsets, drops and clock rates."""

from __future__ import annotations

import pytest

from labrig.capture.rig_sync import SYNC_DEFAULTS, Stream, SyncFigures, judge_sync, measure_sync

MS = 1_000_000


def frames(fps: float, count: int, offset_ms: float = 0.0, drop: tuple[int, ...] = ()) -> list[int]:
    return [round(1e12 + n * 1e9 / fps + offset_ms * MS) for n in range(count) if n not in drop]


def test_a_constant_offset_is_the_spread_of_every_frame_set() -> None:
    figures = measure_sync(
        [Stream("front", 30, frames(30, 300)), Stream("left", 30, frames(30, 300, 3.0))]
    )
    assert figures.frame_sets == figures.instants == 300
    assert figures.spread_ms is not None
    assert figures.spread_ms["p50"] == pytest.approx(3.0, abs=1e-3)
    assert figures.spread_ms["max"] == pytest.approx(3.0, abs=1e-3)
    assert figures.unmatched == {"front": 0, "left": 0}
    assert judge_sync(figures).blocked is None and not judge_sync(figures).degraded


def test_a_dropped_frame_is_unmatched_at_its_instant_only() -> None:
    figures = measure_sync(
        [
            Stream("front", 30, frames(30, 300)),
            Stream("left", 30, frames(30, 300, 1.0, drop=(10, 11, 200, 201))),
            Stream("back", 30, frames(30, 300, -1.0)),
        ]
    )
    assert figures.instants == 300 and figures.frame_sets == 296
    assert figures.unmatched == {"front": 0, "left": 4, "back": 0}
    assert figures.spread_ms is not None and figures.spread_ms["p99"] == pytest.approx(
        2.0, abs=1e-3
    )
    # 4 of 300 is over the 1 % a camera may miss: degraded, and it says which camera
    verdict = judge_sync(figures)
    assert verdict.blocked is None and any(
        "left has no frame at 4 of 300" in r for r in verdict.degraded
    )


def test_faster_cameras_are_matched_at_the_slowest_rate() -> None:
    figures = measure_sync(
        [
            Stream("a", 30, frames(30, 120)),
            Stream("b", 60, frames(60, 240, 0.5)),
            Stream("c", 60, frames(60, 240, -0.5, drop=(1, 3, 5))),  # not on a 30 fps instant
        ]
    )
    assert figures.frame_interval_ms == pytest.approx(1000 / 30)
    assert figures.instants == 120 and figures.frame_sets == 120
    assert figures.unmatched == {"a": 0, "b": 0, "c": 0}
    assert figures.spread_ms is not None and figures.spread_ms["max"] == pytest.approx(
        1.0, abs=1e-3
    )


def test_a_spread_over_a_quarter_of_a_frame_interval_degrades() -> None:
    figures = measure_sync([Stream("a", 30, frames(30, 90)), Stream("b", 30, frames(30, 90, 9.0))])
    verdict = judge_sync(figures)
    assert verdict.blocked is None
    assert (
        verdict.degraded
        and "9.0 ms apart at p99, over 0.25 of a frame interval (8.3 ms)" in (verdict.degraded[0])
    )
    relaxed = dict(SYNC_DEFAULTS, max_spread_fraction=0.3)
    assert not judge_sync(figures, relaxed).degraded


def test_cameras_that_did_not_record_together_are_blocked() -> None:
    # b started after a had stopped: no instant has both
    late = [t + 20 * 10**9 for t in frames(30, 90)]
    figures = measure_sync([Stream("a", 30, frames(30, 90)), Stream("b", 30, late)])
    assert figures.frame_sets == 0 and figures.spread_ms is None
    assert judge_sync(figures).blocked
    # and a camera with no frame at all
    nothing = measure_sync([Stream("a", 30, frames(30, 90)), Stream("b", 30, [])])
    assert nothing.spread_ms is None and "could not be matched" in str(judge_sync(nothing).blocked)
    # most instants missing one camera: blocked, not merely degraded
    holes = measure_sync(
        [
            Stream("a", 30, frames(30, 100)),
            Stream("b", 30, frames(30, 100, drop=tuple(n for n in range(100) if n % 3))),
        ]
    )
    verdict = judge_sync(holes)
    assert (
        verdict.blocked is not None
        and "of 100 instants have a frame from every camera" in verdict.blocked
    )


def test_drift_is_measured_from_the_devices_own_clocks() -> None:
    host_a = frames(30, 900)
    # b's clock says exactly 1/30 s per frame, but its frames come 50 ppm slower on the host clock
    host_b = [round(1e12 + n * (1e9 / 30) * (1 + 50e-6)) for n in range(900)]
    device = [round(n * 1e9 / 30) for n in range(900)]
    figures = measure_sync(
        [Stream("a", 30, host_a, device), Stream("b", 30, host_b, device), Stream("c", 30, host_a)]
    )
    assert figures.drift_ppm["a"] == 0.0
    assert figures.drift_ppm["b"] == pytest.approx(50.0, abs=0.5)
    assert figures.drift_ppm["c"] is None
    # the figures survive being stored
    assert SyncFigures.from_json(figures.to_json()) == figures
