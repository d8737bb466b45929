"""Kinematics: peak speeds of tracked virtual-camera markers against the scene's analytic paths,
plus synthetic movements with known answers (non-uniform timestamps, short tracks, time in
frames)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from labrig.capture.virtual_scenes import MARKERS
from labrig.domain.idempotency import canonical_json
from labrig.pipeline.kinematics import kinematics, to_plane_mm
from labrig.pipeline.tracking import track
from tests.integration.analysis.test_tracking import (
    HD,
    calibration,
    name_tracks,
    plane_homography,
    record_markers,
)


def true_speed(name: str, t: np.ndarray, h: float = 1e-5) -> np.ndarray:
    """Speed (mm/s) of a marker's analytic plane path, by central differences."""
    path = next(p for n, _, p in MARKERS if n == name)
    ahead, behind = np.array([path(x + h) for x in t]), np.array([path(x - h) for x in t])
    return np.linalg.norm(ahead - behind, axis=1) / (2 * h)


def test_peak_speed_of_tracked_markers_is_within_two_percent(tmp_path: Path) -> None:
    rec = record_markers(tmp_path, HD, frames=120)
    tracks = track(rec.decoded(), expected_markers=3, undistort=calibration(rec.camera))
    named = name_tracks(rec.camera, tracks, plane_homography(rec.camera.model))
    times = np.arange(rec.frames) / HD.fps
    for name, mm in named.items():
        result = kinematics(mm, times, "mm", "s", window_s=0.3, polyorder=3)
        assert result.reason is None and result.peak_speed is not None
        truth = true_speed(name, np.linspace(times[0], times[-1], 4001)).max()
        err = 100 * (result.peak_speed - truth) / truth
        speed = result.speed
        assert speed is not None
        rms = float(np.sqrt(np.mean((speed - true_speed(name, result.t)) ** 2)))
        print(
            f"kinematics {name}: peak speed {result.peak_speed:.2f} mm/s vs true {truth:.2f} "
            f"({err:+.3f} %), speed RMS error {rms:.2f} mm/s"
        )
        assert abs(err) < 2.0


def minimum_jerk(t: np.ndarray, distance: float, duration: float) -> np.ndarray:
    s = np.clip(t / duration, 0, 1)
    return distance * (10 * s**3 - 15 * s**4 + 6 * s**5)


def test_a_reach_with_jittered_and_missing_timestamps_is_resampled_and_measured() -> None:
    rng = np.random.default_rng(3)
    t = np.arange(101) / 100 + rng.uniform(-0.002, 0.002, 101)
    t[0], t[-1] = 0.0, 1.0
    keep = np.r_[0:40, 45:101]  # a gap: five samples lost
    t = t[keep]
    along = minimum_jerk(t, 200.0, 1.0)
    result = kinematics(np.column_stack([0.6 * along, 0.8 * along]), t, window_s=0.09)
    # minimum jerk peaks at 1.875 D/T
    assert result.peak_speed == pytest.approx(1.875 * 200.0, rel=0.01)
    assert result.time_to_peak_speed == pytest.approx(0.5, abs=0.02)
    assert result.displacement == pytest.approx(200.0, abs=0.5)
    assert result.path_length == pytest.approx(200.0, abs=1.0)
    assert (result.range_x, result.range_y) == (
        pytest.approx(120.0, abs=0.5),
        pytest.approx(160.0, abs=0.5),
    )
    assert result.extent == pytest.approx(200.0, abs=0.5)
    # a uniform grid at the median interval
    assert np.allclose(np.diff(result.t), np.median(np.diff(t)))
    assert result.acceleration is not None and result.acceleration.shape == (len(result.t), 2)


def test_a_three_sample_track_gets_position_metrics_and_a_reason() -> None:
    result = kinematics([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]], [0.0, 0.1, 0.2])
    assert result.reason is not None and "3 samples" in result.reason
    assert (
        result.peak_speed is None and result.time_to_peak_speed is None and result.velocity is None
    )
    assert result.window_samples is None
    assert result.path_length == pytest.approx(10.0) and result.displacement == pytest.approx(10.0)
    body = result.to_json()
    canonical_json(body)  # plain JSON types, no NaN
    assert body["peak_speed"] is None and body["reason"] == result.reason


def test_a_track_shorter_than_the_window_gets_a_smaller_one() -> None:
    t = np.arange(6) / 100
    result = kinematics(np.column_stack([50.0 * t, np.zeros(6)]), t, window_s=0.25, polyorder=2)
    assert result.window_samples == 5 and result.reason is not None and "shrunk" in result.reason
    assert result.peak_speed == pytest.approx(50.0)
    for empty in ([], [[1.0, 2.0]]):
        assert kinematics(empty, np.arange(len(empty))).path_length == 0.0


def test_time_in_frames_gives_speeds_per_frame() -> None:
    fps, t = 30.0, np.arange(60)
    xy = np.column_stack([100 * np.sin(t / fps), 40 * np.cos(t / fps)])
    per_s = kinematics(xy, t / fps, "px", "s", window_s=9 / fps)
    per_frame = kinematics(xy, t, "px", "frames", window_s=9)
    assert per_s.peak_speed is not None and per_frame.peak_speed is not None
    assert per_frame.peak_speed == pytest.approx(per_s.peak_speed / fps)
    assert per_frame.time_to_peak_speed == pytest.approx(per_s.time_to_peak_speed * fps)
    assert per_frame.to_json(series=False)["units"] == "px" and "xy" not in per_frame.to_json(
        series=False
    )


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="timestamps"):
        kinematics([[0, 0], [1, 1]], [0.0])
    with pytest.raises(ValueError, match="increase"):
        kinematics([[0, 0], [1, 1], [2, 2]], [0.0, 0.1, 0.1])
    with pytest.raises(ValueError, match="finite"):
        kinematics([[0, 0], [np.nan, 1], [2, 2]], [0.0, 0.1, 0.2])


def test_plane_mapping_applies_the_perspective_divide() -> None:
    h = np.array([[0.9, 0.05, -300.0], [-0.02, 1.1, -200.0], [1e-4, -2e-4, 1.0]])
    px = np.array([[0.0, 0.0], [640.0, 360.0], [1279.0, 719.0]])
    expected = cv2.perspectiveTransform(px.reshape(-1, 1, 2), h).reshape(-1, 2)
    assert np.allclose(to_plane_mm(px, h), expected)
    assert to_plane_mm(np.zeros((0, 2)), h).shape == (0, 2)


def test_3d_positions_are_measured_in_three_dimensions() -> None:
    # a helix: 300 mm round, rising 100 mm a turn, one turn a second
    t = np.arange(0, 2, 1 / 60)
    w = 2 * np.pi
    xyz = np.column_stack([300 * np.cos(w * t), 300 * np.sin(w * t), 100 * t])
    k = kinematics(xyz, t, "mm", "s")
    speed = np.hypot(w * 300, 100)
    assert k.dims == 3 and k.xy.shape == (len(t), 3) and k.velocity is not None
    assert k.peak_speed == pytest.approx(speed, rel=1e-3)
    assert k.path_length == pytest.approx(speed * t[-1], rel=3e-3)  # summed chords of the arc
    assert k.range_z == pytest.approx(100 * t[-1], rel=1e-3)
    assert k.extent == pytest.approx(np.hypot(600, 100 * (t[-1] - 0.5)), rel=1e-2)
    body = k.to_json()
    assert "xyz" in body and "xy" not in body and len(body["xyz"][0]) == 3
    # a plane's track keeps its old form: no z, positions named xy
    flat = kinematics(xyz[:, :2], t, "mm", "s").to_json()
    assert "range_z" not in flat and "xy" in flat and "xyz" not in flat
