"""N-view triangulation on the virtual rig's true cameras: exact without noise, a view that does
not fit dropped, a point in fewer than two views (or in two that disagree) a gap, never a guess."""

from __future__ import annotations

import numpy as np
import pytest

from labrig.calibration import Pose, normalised, project, triangulate, triangulate_views
from labrig.capture.rig_world import rig_camera

CAMERAS = [rig_camera(i) for i in range(4)]
POSES = [Pose.of(c.rvec, c.tvec) for c in CAMERAS]
FOCAL = [c.model.fx for c in CAMERAS]


def views_of(points: np.ndarray, noise_px: float = 0.0, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for c, pose in zip(CAMERAS, POSES, strict=True):
        m = c.model
        px = project(points, pose, m.matrix(), m.dist()) + rng.normal(0, noise_px, (len(points), 2))
        out.append(normalised(px, m.matrix(), m.dist()))
    return out


def volume(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform([-1200, -800, 100], [1200, 800, 1900], (n, 3))


def test_points_seen_by_every_camera_are_found_exactly() -> None:
    points = volume(500)
    views = views_of(points)
    assert np.abs(triangulate(views, POSES) - points).max() < 1e-4
    result = triangulate_views(views, POSES, FOCAL)
    assert np.abs(result.points_mm - points).max() < 1e-4
    assert (result.cameras == 4).all() and np.nanmax(result.error_px) < 1e-4


def test_each_point_uses_exactly_the_views_that_have_it() -> None:
    points = volume(400)
    views = views_of(points, noise_px=0.1)
    rng = np.random.default_rng(2)
    hidden = rng.random((4, len(points))) < 0.4
    for k in range(4):
        views[k][hidden[k]] = np.nan
    result = triangulate_views(views, POSES, FOCAL)
    seen = (~hidden).sum(axis=0)
    # one view (or none): a gap, never a guess
    assert np.isnan(result.points_mm[seen < 2]).all() and (result.cameras[seen < 2] == 0).all()
    solved = seen >= 2
    assert (result.used[:, solved] <= ~hidden[:, solved]).all()
    error = np.linalg.norm(result.points_mm[solved] - points[solved], axis=1)
    assert np.sqrt(np.nanmean(error**2)) < 1.0  # 0.1 px at 3 m: about a third of a millimetre


def test_the_refinement_brings_the_points_no_further_from_the_truth_than_the_linear_solve() -> None:
    points = volume(2000, seed=3)
    views = views_of(points, noise_px=0.3, seed=4)
    linear = triangulate_views(views, POSES, FOCAL, refine_points=False)
    refined = triangulate_views(views, POSES, FOCAL)
    assert np.nanmean(refined.error_px) <= np.nanmean(linear.error_px)
    rmse = [
        np.sqrt(np.mean(np.sum((r.points_mm - points) ** 2, axis=1))) for r in (linear, refined)
    ]
    assert rmse[1] <= rmse[0] * 1.01


def test_a_view_that_does_not_fit_the_others_is_dropped() -> None:
    points = volume(300, seed=5)
    views = views_of(points, noise_px=0.05, seed=6)
    views[2][:100] += 3.0 / FOCAL[2]  # camera 2 is 3 px off for the first hundred points
    result = triangulate_views(views, POSES, FOCAL)
    assert result.rejected[2, :100].all() and not result.rejected[:, 100:].any()
    assert (result.cameras[:100] == 3).all()
    assert np.abs(result.points_mm - points).max() < 1.0


def test_two_views_that_disagree_are_a_gap() -> None:
    points = volume(50, seed=7)
    views = views_of(points, noise_px=0.05, seed=8)
    views[2][:] = np.nan
    views[3][:] = np.nan
    views[1][:10] += 5.0 / FOCAL[1]
    result = triangulate_views(views, POSES, FOCAL)
    assert np.isnan(result.points_mm[:10]).all() and (result.cameras[:10] == 0).all()
    assert np.isfinite(result.points_mm[10:]).all()


@pytest.mark.parametrize("count", [0, 1])
def test_no_points_or_a_lone_one_are_answered_not_refused(count: int) -> None:
    points = volume(count)
    result = triangulate_views(views_of(points), POSES, FOCAL)
    assert result.points_mm.shape == (count, 3)
