"""The virtual rig's world: one 3-D scene, its cameras around it, and the ground truth of both.

World coordinates are millimetres with z up and the origin on the floor at the centre of a capture
volume of 3000 × 2000 × 2000 mm (x from -1500 to 1500, y from -1000 to 1000, z from 0 to 2000).
Up to twelve cameras stand around it at known places: ``front``, ``right``, ``back``, ``left``, then
the corners, 1.8 m high, then ``front-high`` … 2.7 m high above the first four; each looks at the
volume's centre with its own lens (:class:`~labrig.capture.virtual_scenes.CameraModel`, mild barrel
distortion).

Scenes (:data:`RIG_SCENES`):

* ``"markers"``: 3-6 spherical markers (20 mm radius) on known 3-D paths: ``steady`` goes round a
  horizontal circle at constant speed, ``behind`` passes behind a pillar standing in the volume
  (hidden from the front cameras for about a third of a second at each pass), the others wave, lift
  and sway;
* ``"flash"``: the same, and a lamp lighting the whole view for 0.25 s every 5 s (at t = 1 s, 6 s,
  11 s … of world time): a brightness step each camera sees at the same instant, for post-hoc sync;
* ``"board"``: a calibration board (chessboard or ChArUco) moved through the volume, and
  ``"floor"``: the board lying still on the floor at the world origin
  (:mod:`labrig.capture.rig_board`); no markers, and the pillar taken out of the volume.

Everything here is a pure function of world time ``t`` (seconds): which frame of which camera shows
which instant is the camera's business (:mod:`labrig.capture.rig_camera`). Points are projected with
``cv2.projectPoints``, so distortion in the images is real.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from labrig.capture.rig_board import BoardKind, BoardView, board_picture, board_pose
from labrig.capture.sources import Image
from labrig.capture.virtual_scenes import CameraModel

Array = npt.NDArray[np.float64]
RigSceneName = Literal["markers", "flash", "board", "floor"]
RIG_SCENES: tuple[RigSceneName, ...] = ("markers", "flash", "board", "floor")
BOARD_SCENES = ("board", "floor")

VOLUME_MM = (3000.0, 2000.0, 2000.0)
MAX_CAMERAS = 12
DEFAULT_CAMERAS = 4
# in the order a rig of N cameras takes them: facing pairs first, then the corners, then a second
# tier above the first four (as a motion-capture room hangs cameras at two heights)
PLACES = (
    "front",
    "right",
    "back",
    "left",
    "front-right",
    "back-right",
    "back-left",
    "front-left",
    "front-high",
    "right-high",
    "back-high",
    "left-high",
)
_PLACE_ANGLE = {  # degrees around the volume, measured from +x; the front is at -y
    "front": -90.0,
    "right": 0.0,
    "back": 90.0,
    "left": 180.0,
    "front-right": -45.0,
    "back-right": 45.0,
    "back-left": 135.0,
    "front-left": -135.0,
    "front-high": -90.0,
    "right-high": 0.0,
    "back-high": 90.0,
    "left-high": 180.0,
}
_RING = (3200.0, 2800.0)  # the ellipse the cameras stand on (x, y semi-axes, mm)
CAMERA_HEIGHT_MM = 1800.0
HIGH_CAMERA_HEIGHT_MM = 2700.0  # the second tier
_LOOK_AT = np.array([0.0, 0.0, 900.0])

MARKER_RADIUS_MM = 20.0
PILLAR_MM = ((-200.0, 200.0), (350.0, 650.0), (0.0, 1800.0))  # x, y, z extent of the occluder
FLASH_EVERY_S, FLASH_FIRST_S, FLASH_LENGTH_S = 5.0, 1.0, 0.25
FLASH_GAIN = 150.0  # grey levels a fully lit frame gains
BACKGROUND = (22, 22, 22)
_FLOOR = (38, 40, 42)
_PILLAR = (60, 75, 95)
_SHIFT = 4  # fixed-point bits for sub-pixel drawing

_W = 2 * math.pi
Path3 = Callable[[float], tuple[float, float, float]]
# name, BGR colour, world position (mm) at t (s)
MARKER_PATHS: tuple[tuple[str, tuple[int, int, int], Path3], ...] = (
    (
        "steady",  # constant speed: 2π·800 mm every 8 s
        (255, 255, 255),
        lambda t: (800 * math.cos(_W * t / 8), 800 * math.sin(_W * t / 8), 1000.0),
    ),
    ("behind", (60, 230, 255), lambda t: (1200 * math.sin(_W * t / 6), 900.0, 1200.0)),
    (
        "wave",
        (255, 230, 60),
        lambda t: (
            900 * math.cos(_W * t / 7),
            -500 + 300 * math.sin(_W * t / 3),
            400 + 250 * math.sin(_W * t / 2.5),
        ),
    ),
    ("lift", (230, 80, 255), lambda t: (-900.0, -300.0, 1000 + 700 * math.sin(_W * t / 4))),
    (
        "figure8",
        (90, 255, 90),
        lambda t: (700 * math.sin(_W * t / 5), 400 * math.sin(2 * _W * t / 5), 1600.0),
    ),
    (
        "sway",
        (40, 140, 255),
        lambda t: (1100.0, 600 * math.sin(_W * t / 4.5), 700 + 200 * math.cos(_W * t / 3)),
    ),
)


@dataclass(frozen=True)
class RigCameraSpec:
    """One camera of the virtual rig: where it stands and its lens, at 1280×720. ``rvec``/``tvec``
    take world points into the camera's frame (OpenCV's convention: x right, y down, z ahead)."""

    index: int
    place: str
    rvec: Array
    tvec: Array
    model: CameraModel

    @property
    def centre_mm(self) -> Array:
        """The optical centre in world millimetres."""
        rot, _ = cv2.Rodrigues(self.rvec)
        return np.asarray(-rot.T @ self.tvec, dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        m = self.model
        return {
            "index": self.index,
            "place": self.place,
            "rvec": [float(v) for v in self.rvec],
            "tvec_mm": [float(v) for v in self.tvec],
            "centre_mm": [float(v) for v in self.centre_mm],
            "image_size": [m.width, m.height],
            "matrix": m.matrix().tolist(),
            "dist": [float(v) for v in m.dist()],
        }


def _look_at(centre: Array, target: Array) -> tuple[Array, Array]:
    z = target - centre
    z /= np.linalg.norm(z)
    x = np.cross(z, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    rot = np.stack([x, y, z])
    rvec, _ = cv2.Rodrigues(rot)
    return np.asarray(rvec, dtype=np.float64).ravel(), np.asarray(-rot @ centre, dtype=np.float64)


@cache
def rig_camera(index: int) -> RigCameraSpec:
    """Camera ``index`` (0-7) of the virtual rig."""
    if not 0 <= index < MAX_CAMERAS:
        raise ValueError(f"the virtual rig has cameras 0-{MAX_CAMERAS - 1}, not {index}")
    place = PLACES[index]
    angle = math.radians(_PLACE_ANGLE[place])
    height = HIGH_CAMERA_HEIGHT_MM if place.endswith("-high") else CAMERA_HEIGHT_MM
    centre = np.array([_RING[0] * math.cos(angle), _RING[1] * math.sin(angle), height])
    rvec, tvec = _look_at(centre, _LOOK_AT)
    model = CameraModel(
        fx=900.0 + 12 * index,
        fy=900.0 + 12 * index,
        cx=639.5 + (index % 3 - 1) * 4.0,
        cy=359.5 + (index % 2) * 3.0,
        k1=-0.04 - 0.005 * index,
    )
    return RigCameraSpec(index, place, rvec, tvec, model)


def marker_positions(t: float, count: int) -> Array:
    """World positions (count×3 mm) of the first ``count`` markers at time ``t``."""
    return np.array([path(t) for _, _, path in MARKER_PATHS[:count]])


def lamp_fraction(start_s: float, end_s: float) -> float:
    """How much of the exposure from ``start_s`` to ``end_s`` (world seconds) the flash lamp was
    on: 0 to 1."""
    if end_s <= start_s:
        return 0.0
    k = math.floor((start_s - FLASH_FIRST_S) / FLASH_EVERY_S)
    lit = 0.0
    for n in (k, k + 1):
        on = FLASH_FIRST_S + n * FLASH_EVERY_S
        lit += max(0.0, min(end_s, on + FLASH_LENGTH_S) - max(start_s, on))
    return lit / (end_s - start_s)


def flash_instants(start_s: float, end_s: float) -> list[float]:
    """The world times the lamp came on between ``start_s`` and ``end_s``."""
    first = math.ceil((start_s - FLASH_FIRST_S) / FLASH_EVERY_S)
    out = []
    n = first
    while (on := FLASH_FIRST_S + n * FLASH_EVERY_S) < end_s:
        out.append(on)
        n += 1
    return out


def _pillar_corners() -> Array:
    (x0, x1), (y0, y1), (z0, z1) = PILLAR_MM
    return np.array([[x, y, z] for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)])


def occluded(camera: RigCameraSpec, point: Array) -> bool:
    """Whether the pillar stands between ``camera`` and the world ``point`` (slab test)."""
    origin = camera.centre_mm
    direction = point - origin
    near, far = 0.0, 1.0
    for axis, (lo, hi) in enumerate(PILLAR_MM):
        d = direction[axis]
        if abs(d) < 1e-12:
            if not lo <= origin[axis] <= hi:
                return False
            continue
        a, b = (lo - origin[axis]) / d, (hi - origin[axis]) / d
        near, far = max(near, min(a, b)), min(far, max(a, b))
        if near > far:
            return False
    return True


def _floor_outline() -> Array:
    hx, hy = VOLUME_MM[0] / 2, VOLUME_MM[1] / 2
    box = np.array([[-hx, -hy, 0], [hx, -hy, 0], [hx, hy, 0], [-hx, hy, 0]], dtype=np.float64)
    e = np.linspace(0, 1, 16, endpoint=False)[:, None]
    return np.concatenate([a + e * (b - a) for a, b in zip(box, np.roll(box, -1, 0), strict=True)])


_FLOOR_OUTLINE = _floor_outline()
_PILLAR_CORNERS = _pillar_corners()


def _px(points: Array) -> npt.NDArray[np.int32]:
    return np.round(points * (1 << _SHIFT)).astype(np.int32)


class RigView:
    """The world seen by one camera at one image size: renders frames and says what they show."""

    def __init__(self, camera: RigCameraSpec, width: int, height: int, markers: int) -> None:
        self.camera, self.markers = camera, markers
        self.model = camera.model.scaled(width, height)
        self.background = np.empty((height, width, 3), np.uint8)
        self.background[:] = BACKGROUND
        floor = self._project(_FLOOR_OUTLINE)
        cv2.fillPoly(self.background, [_px(floor)], _FLOOR, cv2.LINE_AA, _SHIFT)
        pillar = cv2.convexHull(self._project(_PILLAR_CORNERS).astype(np.float32))
        self._pillar = _px(pillar.reshape(-1, 2).astype(np.float64))
        self._board: BoardView | None = None

    def _project(self, points: Array) -> Array:
        return self.model.project(points, self.camera.rvec, self.camera.tvec)

    def _depths(self, points: Array) -> Array:
        rot, _ = cv2.Rodrigues(self.camera.rvec)
        return np.asarray((points @ rot.T + self.camera.tvec)[:, 2], dtype=np.float64)

    @property
    def board(self) -> BoardView:
        """How this camera sees the calibration board (made when first asked for)."""
        if self._board is None:
            m = self.model
            self._board = BoardView(
                m.matrix(), m.dist(), self.camera.rvec, self.camera.tvec, m.width, m.height
            )
        return self._board

    def render_board(self, scene: str, kind: BoardKind, t: float, img: Image) -> None:
        """Draw the board of ``scene`` ("board" or "floor") at world time ``t`` onto ``img``, a
        copy of :attr:`background`. The pillar is taken out of the volume for calibration."""
        rot, shift = board_pose(scene, kind, t)
        self.board.render(rot, shift, board_picture(kind), img)

    def board_truth(self, scene: str, kind: BoardKind, t: float) -> dict[str, Any]:
        """The board at world time ``t``: its name, pose (board → world), corners in world mm, and
        for this camera each corner's image position and whether it is seen (in the picture, the
        printed side facing the camera)."""
        rot, shift = board_pose(scene, kind, t)
        picture = board_picture(kind)
        world = picture.corners_mm @ rot.T + shift
        seen = self.board.truth(rot, shift, picture)
        return {
            "board": picture.name,
            "rotation": rot,
            "translation_mm": shift,
            "corners_world_mm": world,
            "corners_px": seen["corners_px"],
            "facing": seen["facing"],
            "seen": seen["in_view"],
        }

    def render(self, t: float, img: Image) -> None:
        """Draw the markers at world time ``t`` (and the pillar between) onto ``img``, a copy of
        :attr:`background`."""
        points = marker_positions(t, self.markers)
        centres, depths = self._project(points), self._depths(points)
        hidden = [occluded(self.camera, p) for p in points]
        order = sorted(range(len(points)), key=lambda i: -depths[i])
        for behind in (True, False):  # painter's order: what the pillar hides is drawn first
            if not behind:
                cv2.fillConvexPoly(img, self._pillar, _PILLAR, cv2.LINE_AA, _SHIFT)
            for i in order:
                if hidden[i] is behind and depths[i] > 0:
                    radius = self.model.fx * MARKER_RADIUS_MM / depths[i]
                    centre = _px(centres[i])
                    cv2.circle(
                        img,
                        (int(centre[0]), int(centre[1])),
                        max(1, round(radius * (1 << _SHIFT))),
                        MARKER_PATHS[i][1],
                        -1,
                        cv2.LINE_AA,
                        _SHIFT,
                    )

    def truth(self, t: float) -> list[dict[str, Any]]:
        """Each marker at world time ``t``: its world position, its image position, and whether
        this camera sees it (in the picture and not behind the pillar)."""
        points = marker_positions(t, self.markers)
        centres, depths = self._project(points), self._depths(points)
        out = []
        for i, (name, _, _) in enumerate(MARKER_PATHS[: self.markers]):
            x, y = float(centres[i, 0]), float(centres[i, 1])
            inside = 0 <= x < self.model.width and 0 <= y < self.model.height and depths[i] > 0
            out.append(
                {
                    "name": name,
                    "world_mm": tuple(float(v) for v in points[i]),
                    "image_px": (x, y),
                    "visible": bool(inside and not occluded(self.camera, points[i])),
                }
            )
        return out
