"""Where the peak speed is searched: never in the edge half-windows, whose velocities are the edge
polynomial's extrapolation (pipeline/kinematics.py's docstring)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from labrig.pipeline.kinematics import kinematics

FPS = 30.0
RADIUS_MM, PERIOD_S = 150.0, 4.0  # the virtual camera's circle marker
TRUE_SPEED = 2 * math.pi * RADIUS_MM / PERIOD_S  # 235.6 mm/s, at every instant


@pytest.mark.parametrize("seed", range(6))
def test_a_constant_speed_circle_with_small_noise_peaks_at_its_speed(seed: int) -> None:
    t = np.arange(90) / FPS  # an attempt of `labrig demo`: 3 s
    angle = 2 * math.pi * t / PERIOD_S
    xy = RADIUS_MM * np.column_stack([np.cos(angle), np.sin(angle)])
    # 0.05 mm: the tracker's scatter on the virtual camera is of this order
    noisy = xy + np.random.default_rng(seed).normal(0.0, 0.05, xy.shape)
    result = kinematics(noisy, t, "mm", "s", window_s=0.25)
    assert result.peak_speed is not None and result.time_to_peak_speed is not None
    assert result.window_samples is not None
    assert result.peak_speed == pytest.approx(TRUE_SPEED, rel=0.01)
    half = result.window_samples // 2 / FPS
    assert half - 1e-9 <= result.time_to_peak_speed <= t[-1] - half + 1e-9
    # the series keep the edge estimates: the plots still show the whole track
    assert len(result.t) == len(t) and result.speed is not None and len(result.speed) == len(t)


def test_a_track_as_short_as_its_window_peaks_at_its_centre() -> None:
    t = np.arange(5) / FPS
    result = kinematics(np.column_stack([50.0 * t, np.zeros(5)]), t, window_s=0.25, polyorder=2)
    assert result.window_samples == 5
    assert result.time_to_peak_speed == pytest.approx(2 / FPS)
    assert result.peak_speed == pytest.approx(50.0)
