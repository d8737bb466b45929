"""Points through a real lens and back: what the tracker measures (undistorted px) and what the
player draws and takes back from a drag (the recorded picture's px) are one mapping and its
inverse."""

from __future__ import annotations

import numpy as np

from labrig.pipeline.lens import distort_px, undistort_px

K = np.array([[800.0, 0.0, 640.0], [0.0, 800.0, 360.0], [0.0, 0.0, 1.0]])
DIST = np.array([-0.28, 0.09, 0.001, -0.0005, 0.0])  # a wide webcam's barrel distortion


def test_distorting_then_undistorting_returns_every_point_across_the_picture() -> None:
    xs, ys = np.meshgrid(np.linspace(20, 1260, 9), np.linspace(20, 700, 7))
    ideal = np.column_stack([xs.ravel(), ys.ravel()])
    recorded = distort_px(ideal, (K, DIST))
    # barrel distortion pulls the corners in by tens of px; the centre stays
    assert np.abs(recorded - ideal).max() > 20.0
    np.testing.assert_allclose(recorded[len(ideal) // 2], ideal[len(ideal) // 2], atol=1e-9)
    np.testing.assert_allclose(undistort_px(recorded, (K, DIST)), ideal, atol=1e-3)


def test_without_a_lens_points_are_kept_as_they_are() -> None:
    points = np.array([[1.5, 2.5], [300.0, 200.0]])
    np.testing.assert_array_equal(undistort_px(points, None), points)
    np.testing.assert_array_equal(distort_px(points, None), points)
    assert undistort_px(np.empty((0, 2)), (K, DIST)).shape == (0, 2)
