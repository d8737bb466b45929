"""The virtual camera's scenes: the lens model they are rendered through, and what each shows, with
its ground truth. Pure functions of time: no clock, no state, any thread.

* ``"markers"``: a flat measurement plane 1000 mm in front of the camera, slightly tilted, with
  three bright circular markers (8 mm radius) moving on known paths in plane coordinates (mm): a
  circle, a line travelled back and forth, a Lissajous figure.
* ``"board"``: a chessboard (default 9×6 inner corners, 25 mm squares, white margin) held up and
  moved smoothly, covering tilts and image regions, so frames of it calibrate a camera.
* ``"plane"``: the same chessboard lying still on the markers' measurement plane: the view that
  gives the plane's scale (mm).

Points are projected with ``cv2.projectPoints``, so the lens distortion in the images is real.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from labrig.capture.sources import Image
from labrig.domain.recordings import RecordingPurpose

Array = npt.NDArray[np.float64]
SceneName = Literal["markers", "board", "plane"]
SCENES: tuple[SceneName, ...] = ("markers", "board", "plane")
SCENE_LABELS: dict[SceneName, str] = {
    "markers": "Markers moving on the plane",
    "board": "Calibration board held up and moved",
    "plane": "Calibration board lying still on the plane",
}
# what a recording of each scene is for: the board scenes are board and plane recordings
SCENE_PURPOSE: dict[SceneName, RecordingPurpose] = {
    "markers": RecordingPurpose.ATTEMPT,
    "board": RecordingPurpose.BOARD,
    "plane": RecordingPurpose.PLANE,
}
# fixed-point bits for the fill functions: sub-pixel edges, so centroids and corners are exact
_SHIFT = 4


@dataclass(frozen=True)
class CameraModel:
    """A pinhole camera with OpenCV's distortion model; focal lengths and centre in pixels of a
    width×height image."""

    width: int = 1280
    height: int = 720
    fx: float = 1000.0
    fy: float = 1000.0
    cx: float = 639.5
    cy: float = 359.5
    k1: float = -0.05  # mild barrel distortion: something real for a calibration to find
    k2: float = 0.0
    p1: float = 0.0
    p2: float = 0.0
    k3: float = 0.0

    def matrix(self) -> Array:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def dist(self) -> Array:
        return np.array([self.k1, self.k2, self.p1, self.p2, self.k3])

    def scaled(self, width: int, height: int) -> CameraModel:
        """The same lens and field of view read out at another size (distortion is in normalised
        units: unchanged)."""
        sx, sy = width / self.width, height / self.height
        return replace(
            self,
            width=width,
            height=height,
            fx=self.fx * sx,
            fy=self.fy * sy,
            cx=(self.cx + 0.5) * sx - 0.5,
            cy=(self.cy + 0.5) * sy - 0.5,
        )

    def project(self, points: Array, rvec: Array, tvec: Array) -> Array:
        """Image positions (N×2 px) of N×3 points given in a frame posed by ``rvec``/``tvec``."""
        img, _ = cv2.projectPoints(points.reshape(-1, 1, 3), rvec, tvec, self.matrix(), self.dist())
        return np.asarray(img, dtype=np.float64).reshape(-1, 2)


def _fill(img: Image, pts: Array, color: tuple[int, int, int]) -> None:
    cv2.fillConvexPoly(
        img, np.round(pts * (1 << _SHIFT)).astype(np.int32), color, cv2.LINE_AA, _SHIFT
    )


Path = Callable[[float], tuple[float, float]]
_W = 2 * math.pi
MARKERS: tuple[
    tuple[str, tuple[int, int, int], Path], ...
] = (  # name, BGR colour, plane position (mm) at t (s)
    (
        "circle",
        (255, 255, 255),
        lambda t: (-350 + 150 * math.cos(_W * t / 4), 150 * math.sin(_W * t / 4)),
    ),
    ("line", (60, 230, 255), lambda t: (100 + 250 * math.cos(_W * t / 3), 220.0)),
    (
        "lissajous",
        (255, 230, 60),
        lambda t: (300 + 200 * math.cos(_W * t * 0.3), -80 + 120 * math.sin(_W * t * 0.2)),
    ),
)


class MarkersScene:
    """Three markers on a plane whose pose is fixed; positions in plane millimetres
    (x right, y down)."""

    radius_mm = 8.0
    plane_rvec = np.array([0.12, -0.08, 0.0])
    plane_tvec = np.array([0.0, 0.0, 1000.0])
    background = (22, 22, 22)

    def __init__(self, model: CameraModel) -> None:
        self.model = model
        a = np.linspace(0, 2 * np.pi, 48, endpoint=False)
        self._outline = np.stack([np.cos(a), np.sin(a), np.zeros_like(a)], axis=1) * self.radius_mm

    def _project(self, t: float) -> tuple[Array, Array]:
        """Plane centres (N×3 mm) and the image points of the centres then of every outline (px)."""
        centres = np.array([[*path(t), 0.0] for _, _, path in MARKERS])
        pts = np.concatenate([centres, (self._outline[None] + centres[:, None]).reshape(-1, 3)])
        return centres, self.model.project(pts, self.plane_rvec, self.plane_tvec)

    def render(self, t: float, img: Image) -> None:
        _, px = self._project(t)
        n, k = len(MARKERS), len(self._outline)
        for i, (_, color, _) in enumerate(MARKERS):
            _fill(img, px[n + i * k : n + (i + 1) * k], color)

    def truth(self, t: float) -> dict[str, Any]:
        centres, px = self._project(t)
        markers = [
            {
                "name": name,
                "plane_mm": (float(centres[i, 0]), float(centres[i, 1])),
                "image_px": (float(px[i, 0]), float(px[i, 1])),
                "radius_mm": self.radius_mm,
            }
            for i, (name, _, _) in enumerate(MARKERS)
        ]
        return {
            "scene": "markers",
            "t": t,
            "plane_rvec": self.plane_rvec.copy(),
            "plane_tvec": self.plane_tvec.copy(),
            "markers": markers,
        }


class BoardScene:
    """A chessboard; its frame has the first inner corner at the origin (OpenCV's
    calibration convention)."""

    background = (70, 70, 70)

    def __init__(
        self, model: CameraModel, cols: int = 9, rows: int = 6, square_mm: float = 25.0
    ) -> None:
        self.model, self.cols, self.rows, self.square = model, cols, rows, square_mm
        s = square_mm
        gx, gy = np.meshgrid(np.arange(cols, dtype=np.float64), np.arange(rows, dtype=np.float64))
        self.object_corners = np.stack([gx.ravel() * s, gy.ravel() * s, np.zeros(gx.size)], axis=1)
        # square corners
        sx, sy = np.meshgrid(np.arange(-1, cols + 1) * s, np.arange(-1, rows + 1) * s)
        self._squares = np.stack([sx.ravel(), sy.ravel(), np.zeros(sx.size)], axis=1)
        w = cols + 2  # square corners per row
        self._black = [
            (j * w + i, j * w + i + 1, (j + 1) * w + i + 1, (j + 1) * w + i)
            for j in range(rows + 1)
            for i in range(cols + 1)
            if (i + j) % 2 == 0
        ]
        # a white margin one square wide; its edges are subdivided so they bend with the lens like
        # the real thing
        box = (
            np.array([[-2, -2, 0], [cols + 1, -2, 0], [cols + 1, rows + 1, 0], [-2, rows + 1, 0]])
            * s
        )
        e = np.linspace(0, 1, 16, endpoint=False)[:, None]
        self._margin = np.concatenate(
            [a + e * (b - a) for a, b in zip(box, np.roll(box, -1, axis=0), strict=True)]
        )
        self._centre = np.array([(cols - 1) * s / 2, (rows - 1) * s / 2, 0.0])

    def pose(self, t: float) -> tuple[Array, Array]:
        """rvec, tvec of the board at time t: tilts up to ~30°,
        the board wandering over the image."""
        w = 2 * math.pi * t
        rvec = np.array(
            [0.5 * math.sin(w / 6.1), 0.5 * math.sin(w / 4.7 + 1.0), 0.3 * math.sin(w / 8.3 + 2.0)]
        )
        centre = np.array(
            [170 * math.sin(w / 7.3), 80 * math.sin(w / 5.9 + 0.5), 820 + 100 * math.sin(w / 9.7)]
        )
        rot, _ = cv2.Rodrigues(rvec)
        return rvec, centre - rot @ self._centre

    def render(self, t: float, img: Image) -> None:
        rvec, tvec = self.pose(t)
        px = self.model.project(np.concatenate([self._margin, self._squares]), rvec, tvec)
        cv2.fillPoly(
            img,
            [np.round(px[:64] * (1 << _SHIFT)).astype(np.int32)],
            (230, 230, 230),
            cv2.LINE_AA,
            _SHIFT,
        )
        squares = px[64:]
        for quad in self._black:
            _fill(img, squares[list(quad)], (25, 25, 25))

    def truth(self, t: float) -> dict[str, Any]:
        rvec, tvec = self.pose(t)
        return {
            "scene": "board",
            "t": t,
            "rvec": rvec,
            "tvec": tvec,
            "pattern": (self.cols, self.rows),
            "square_mm": self.square,
            "corners_px": self.model.project(self.object_corners, rvec, tvec),
        }


class PlaneBoardScene(BoardScene):
    """The chessboard lying still on the markers' measurement plane, centred on its origin: the view
    that gives the plane's metric scale (board mm = plane mm + the board's centre offset)."""

    def pose(self, t: float) -> tuple[Array, Array]:
        rot, _ = cv2.Rodrigues(MarkersScene.plane_rvec)
        return MarkersScene.plane_rvec.copy(), MarkersScene.plane_tvec - rot @ self._centre

    def truth(self, t: float) -> dict[str, Any]:
        return super().truth(t) | {"scene": "plane", "board_centre_mm": self._centre[:2].copy()}
