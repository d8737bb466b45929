"""Multi-camera geometry: camera poses and projection (triangulation is in ``triangulation.py``).

A camera's pose is OpenCV's: ``rvec``/``tvec`` take world points into the camera's frame
(``x_cam = R · x_world + t``), lengths in millimetres. Triangulation works on undistorted,
normalised image points (``cv2.undistortPoints`` without ``P``), so each camera's projection
matrix is just ``[R | t]``. Qt-free, no database, deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Pose:
    """World → camera: ``x_cam = rotation @ x_world + translation_mm``."""

    rotation: Array  # 3×3
    translation_mm: Array  # 3

    @classmethod
    def of(cls, rvec: npt.ArrayLike, tvec_mm: npt.ArrayLike) -> Pose:
        rot, _ = cv2.Rodrigues(np.asarray(rvec, dtype=np.float64).reshape(3, 1))
        return cls(np.asarray(rot, dtype=np.float64), np.asarray(tvec_mm, np.float64).reshape(3))

    @property
    def rvec(self) -> Array:
        r, _ = cv2.Rodrigues(self.rotation)
        return np.asarray(r, dtype=np.float64).reshape(3)

    @property
    def centre_mm(self) -> Array:
        """The optical centre in world millimetres."""
        return np.asarray(-self.rotation.T @ self.translation_mm, dtype=np.float64)

    @property
    def axis(self) -> Array:
        """The optical axis (the camera's +z) in world coordinates, unit length."""
        return np.asarray(self.rotation[2], dtype=np.float64)

    def then(self, other: Pose) -> Pose:
        """This pose followed by ``other`` (``other`` takes this pose's camera frame onward)."""
        rot, shift = other.rotation, other.translation_mm
        return Pose(rot @ self.rotation, rot @ self.translation_mm + shift)

    def inverse(self) -> Pose:
        return Pose(self.rotation.T, -self.rotation.T @ self.translation_mm)

    def matrix(self) -> Array:
        """The 3×4 ``[R | t]``."""
        return np.hstack([self.rotation, self.translation_mm.reshape(3, 1)])


def angle_deg(a: Array, b: Array) -> float:
    """The angle between two directions, in degrees."""
    cos = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))


def rotation_angle_deg(a: Array, b: Array) -> float:
    """How far rotation ``b`` is from rotation ``a`` (3×3 each), in degrees."""
    cos = (float(np.trace(a.T @ b)) - 1.0) / 2.0
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))


def mean_rotation(rotations: Sequence[Array]) -> Array:
    """The rotation nearest (in the Frobenius sense) to the mean of ``rotations``."""
    u, _, vt = np.linalg.svd(np.sum(rotations, axis=0))
    r = u @ vt
    if np.linalg.det(r) < 0:
        u[:, -1] *= -1
        r = u @ vt
    return np.asarray(r, dtype=np.float64)


def normalised(points_px: Array, matrix: Array, dist: Array) -> Array:
    """Image points (N×2 px) undistorted into normalised camera coordinates (N×2)."""
    pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 1, 2)
    if not len(pts):
        return np.zeros((0, 2))
    out = cv2.undistortPoints(pts, matrix, dist)
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def project(points_mm: Array, pose: Pose, matrix: Array, dist: Array) -> Array:
    """World points (N×3 mm) into a camera's image (N×2 px), through its lens."""
    pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 1, 3)
    if not len(pts):
        return np.zeros((0, 2))
    out, _ = cv2.projectPoints(pts, pose.rvec, pose.translation_mm, matrix, dist)
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)
