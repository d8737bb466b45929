"""Points between a recorded picture and the same camera's undistorted picture (the same camera
matrix): the tracker measures markers on the undistorted picture (:func:`undistort_px`), and what
is drawn over the recorded one goes back through the lens (:func:`distort_px`)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
Lens = tuple[Any, Any]  # camera matrix (3×3), distortion coefficients
_UNDISTORT = (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 30, 1e-9)


def undistort_px(points: Any, lens: Lens | None) -> Array:
    """N×2 recorded-picture px → px of the undistorted picture (the points as they are without a
    lens)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if lens is None or not len(pts):
        return pts
    k, dist = (np.asarray(v, dtype=np.float64) for v in lens)
    ideal = cv2.undistortPoints(pts.reshape(-1, 1, 2), k, dist, P=k, criteria=_UNDISTORT)
    return np.asarray(ideal, dtype=np.float64).reshape(-1, 2)


def distort_px(points: Any, lens: Lens | None) -> Array:
    """N×2 undistorted-picture px → the recorded picture's px."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if lens is None or not len(pts):
        return pts
    k, dist = (np.asarray(v, dtype=np.float64) for v in lens)
    rays = np.column_stack([pts, np.ones(len(pts))]) @ np.linalg.inv(k).T
    img, _ = cv2.projectPoints(rays.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), k, dist)
    return np.asarray(img, dtype=np.float64).reshape(-1, 2)
