"""Triangulation over any number of calibrated cameras: linear (DLT), an optional non-linear
refinement of each point's reprojection error, per-view errors in pixels, and views that do not fit
dropped.

Every function takes points already undistorted into normalised camera coordinates
(:func:`~labrig.calibration.geometry.normalised`), one K×N array per camera, NaN where camera k did
not see point n, and the cameras' :class:`~labrig.calibration.geometry.Pose`. A point seen by fewer
than two cameras is NaN: a gap, never a guess.

All of it is batched with NumPy: every point is solved at once (one stacked 3×3 solve for the
linear step and per Gauss-Newton step; a view a point lacks weighs nothing), so throughput does not
depend on a Python loop over points. Qt-free, no database, deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from labrig.calibration.geometry import Pose

Array = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


def _stack(views: Sequence[npt.ArrayLike]) -> Array:
    obs = np.stack([np.asarray(v, dtype=np.float64).reshape(-1, 2) for v in views])
    return obs  # K×N×2


def triangulate(normalised_views: Sequence[npt.ArrayLike], poses: Sequence[Pose]) -> Array:
    """Linear (DLT) triangulation: each point solved from every view that has it. Returns N×3
    world mm (NaN for a point in fewer than two views)."""
    obs = _stack(normalised_views) if len(normalised_views) else np.zeros((0, 0, 2))
    return _dlt(obs, _seen(obs), poses)


def _seen(obs: Array) -> Mask:
    return np.asarray(np.isfinite(obs).all(axis=2), dtype=np.bool_)


def _dlt(obs: Array, seen: Mask, poses: Sequence[Pose]) -> Array:
    """The linear solve: each view gives two equations, x·P₃ − P₁ and y·P₃ − P₂ (rows of
    ``[R | t]``), on the point (X, 1); their least-squares solution through the 3×3 normal
    equations, every point at once (a view it lacks weighs nothing)."""
    count = obs.shape[1]
    out = np.full((count, 3), np.nan)
    if count == 0:
        return out
    mats = np.stack([p.matrix() for p in poses])  # K×3×4
    weight = seen.astype(np.float64)[..., None]  # K×N×1
    xy = np.where(seen[..., None], obs, 0.0)
    normal = np.zeros((count, 4, 4))
    for axis in (0, 1):
        rows = xy[:, :, axis, None] * mats[:, None, 2] - mats[:, None, axis]  # K×N×4
        normal += np.einsum("kni,knj->nij", rows * weight, rows)
    solvable = seen.sum(axis=0) >= 2
    lhs, rhs = normal[solvable, :3, :3], -normal[solvable, :3, 3]
    out[solvable] = np.linalg.solve(lhs, rhs[..., None])[..., 0]
    return out


def view_errors_px(
    points_mm: Array, obs: Array, seen: Mask, poses: Sequence[Pose], focal_px: Sequence[float]
) -> Array:
    """K×N: how far (px of the undistorted image) each view's observation is from the point's
    projection; NaN where the view is not used, inf where the point is behind the camera."""
    rot = np.stack([p.rotation for p in poses])
    shift = np.stack([p.translation_mm for p in poses])
    cam = np.einsum("kij,nj->kni", rot, points_mm) + shift[:, None, :]  # K×N×3
    with np.errstate(divide="ignore", invalid="ignore"):
        proj = cam[..., :2] / cam[..., 2:3]
        err = np.linalg.norm(proj - obs, axis=2) * np.asarray(focal_px, dtype=np.float64)[:, None]
    err = np.where(cam[..., 2] > 0, err, np.inf)
    return np.where(seen, err, np.nan)


def refine(
    points_mm: Array,
    obs: Array,
    seen: Mask,
    poses: Sequence[Pose],
    focal_px: Sequence[float],
    iterations: int = 5,
) -> Array:
    """Gauss-Newton on each point's reprojection error (px) over the views ``seen`` marks, from
    ``points_mm`` (the DLT's answer). Points in fewer than two views stay as they are."""
    x = points_mm.copy()
    rot = np.stack([p.rotation for p in poses])  # K×3×3
    shift = np.stack([p.translation_mm for p in poses])
    f = np.asarray(focal_px, dtype=np.float64)[:, None, None]
    live = (seen.sum(axis=0) >= 2) & np.isfinite(x).all(axis=1)
    w = seen[:, live, None].astype(np.float64)  # K×M×1
    o = np.where(seen[:, live, None], obs[:, live], 0.0)
    for _ in range(iterations):
        xs = x[live]
        cam = np.einsum("kij,nj->kni", rot, xs) + shift[:, None, :]  # K×M×3
        z = np.where(np.abs(cam[..., 2:3]) < 1e-9, 1e-9, cam[..., 2:3])
        r = (cam[..., :2] / z - o) * f * w  # K×M×2, px
        # d(projection)/d(camera point), then through the rotation: K×M×2×3
        d = np.zeros((*cam.shape[:2], 2, 3))
        d[..., 0, 0] = d[..., 1, 1] = 1.0 / z[..., 0]
        d[..., :, 2] = -cam[..., :2] / (z * z)
        jac = np.einsum("kmij,kjl->kmil", d, rot) * f[..., None] * w[..., None]
        h = np.einsum("kmij,kmil->mjl", jac, jac)
        g = np.einsum("kmij,kmi->mj", jac, r)
        step = np.linalg.solve(h + 1e-12 * np.eye(3), -g[..., None])[..., 0]
        x[live] = xs + step
        if float(np.abs(step).max(initial=0.0)) < 1e-6:
            break
    return x


@dataclass(frozen=True)
class Triangulated:
    """Points triangulated from several views, with what each used and how well it fits."""

    points_mm: Array  # N×3, NaN in a gap
    used: Mask  # K×N: the views each point was solved from
    view_errors_px: Array  # K×N: each used view's reprojection error, NaN where not used
    rejected: Mask  # K×N: views dropped for not fitting the others (or a gap's disagreeing pair)
    limit_px: float  # the error over which a view was taken not to fit

    @property
    def error_px(self) -> Array:
        """Each point's reprojection RMS over its used views (NaN in a gap)."""
        e = np.where(self.used, self.view_errors_px, 0.0)
        n = self.used.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n >= 2, np.sqrt((e * e).sum(axis=0) / n), np.nan)

    @property
    def cameras(self) -> npt.NDArray[np.int64]:
        """How many cameras each point was solved from (0 in a gap)."""
        return np.asarray(self.used.sum(axis=0), dtype=np.int64)


def triangulate_views(
    normalised_views: Sequence[npt.ArrayLike],
    poses: Sequence[Pose],
    focal_px: Sequence[float],
    *,
    max_view_error_px: float = 2.0,
    typical_factor: float = 5.0,
    refine_points: bool = True,
) -> Triangulated:
    """Triangulate every point from all the views that have it, and drop the views that do not
    fit: a half-hidden marker, two markers merged in one picture, a wrong match.

    A view does not fit when it is further from the point than the limit: ``max_view_error_px``,
    or ``typical_factor`` times the points' median view error if that is smaller (never under
    0.2 px), so sharp cameras are held to their own precision. While a point's worst view is over
    the limit and three or more remain, the one view whose absence leaves the others fitting best
    is dropped and the point solved again; a point whose last two views still disagree by more
    than the limit is a gap, as is one seen once: either camera could be the wrong one.
    ``refine_points``: a Gauss-Newton refinement of each point's reprojection error after the
    DLT."""
    obs = _stack(normalised_views)
    seen = _seen(obs)
    used = seen.copy()
    first = view_errors_px(_dlt(obs, used, poses), obs, used, poses, focal_px)
    typical = float(np.nanmedian(first[np.isfinite(first)])) if np.isfinite(first).any() else 0.0
    limit = min(max_view_error_px, max(0.2, typical_factor * typical))
    for _ in range(max(len(poses) - 2, 0)):
        points = _dlt(obs, used, poses)
        worst = _worst(view_errors_px(points, obs, used, poses, focal_px), used)
        bad = np.flatnonzero((worst > limit) & (used.sum(axis=0) >= 3))
        if not len(bad):
            break
        # leave each view out in turn: the one whose absence fits the rest best goes
        best = np.full(len(bad), np.inf)
        drop = np.zeros(len(bad), dtype=np.int64)
        for k in range(len(poses)):
            trial = used[:, bad].copy()
            has = trial[k].copy()
            trial[k] = False
            points = _dlt(obs[:, bad], trial, poses)
            fit = _worst(view_errors_px(points, obs[:, bad], trial, poses, focal_px), trial)
            better = has & (fit < best)
            best[better], drop[better] = fit[better], k
        used[drop, bad] = False
    points = _dlt(obs, used, poses)
    if refine_points:
        points = refine(points, obs, used, poses, focal_px)
    errors = view_errors_px(points, obs, used, poses, focal_px)
    views = used.sum(axis=0)
    gap = (views < 2) | ((views == 2) & (_worst(errors, used) > limit))
    used[:, gap] = False
    errors[:, gap] = np.nan
    points[gap] = np.nan
    return Triangulated(points, used, errors, seen & ~used, limit)


def _worst(errors: Array, used: Mask) -> Array:
    """Each point's largest error over its used views (-1 for none)."""
    return np.asarray(np.where(used, errors, -1.0).max(axis=0, initial=-1.0), dtype=np.float64)
