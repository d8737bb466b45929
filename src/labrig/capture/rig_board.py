"""The virtual rig's calibration boards: a chessboard or a ChArUco board, moved through the volume
or lying on the floor, seen by each camera through its lens.

Two boards, big enough to calibrate a room-sized rig (both are in ``resources/boards.json``):

* ``virtual-rig-9x6-80``: a chessboard of 9 × 6 inner corners, 80 mm squares, a white margin one
  square wide; its frame has the first inner corner at the origin (OpenCV's convention);
* ``virtual-rig-charuco-7x5-100``: ChArUco, 7 × 5 squares of 100 mm with 75 mm ``DICT_4X4_50``
  markers (OpenCV's own pattern); its frame has the board's corner at the origin.

Scenes: ``"board"`` moves the board through the volume, upright, turning once every 9 s about the
vertical and tilting, so at most instants two or three cameras see its printed side at once;
``"floor"`` lays it still on the floor, printed side up, its frame's origin at the world origin,
its x along the world's x and its y along the world's −y (so the board's plane is z = 0).

Each camera sees the board exactly through its lens: every pixel near the board is traced back
along its (undistorted) ray to the board's plane and the board's picture is sampled there
(``cv2.remap``), so the corners a detector finds are where :meth:`BoardView.truth` projects them
with ``cv2.projectPoints``, distortion included. Each pixel is the mean of :data:`SUBSAMPLES` ²
samples spread over its area, as a sensor's pixel gathers the light falling on all of it: sampled
once at its centre, a print's sharp edges turn into stairs, and a detector finds the corners of a
board seen at a slant 0.2-0.3 px off (0.07 px with 3 × 3 samples; measured in
``tests/integration/capture/test_rig_board.py``). Only the pixels an edge crosses (those differing
from a neighbour, and their neighbours) are sampled again: elsewhere every sample is the centre's,
so a frame costs about what one sample a pixel did (4.3 ms a 1280x720 board frame, against 7.3 ms
sampling every pixel 9 times: enough to make three live cameras lose frames on 2 cores). A board
seen from behind (or nearly edge-on) is not drawn. The volume is cleared for calibration: the
pillar is not there in these scenes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from labrig.capture.sources import Image

Array = npt.NDArray[np.float64]
BoardKind = Literal["chessboard", "charuco"]
BOARD_NAMES: dict[BoardKind, str] = {
    "chessboard": "virtual-rig-9x6-80",
    "charuco": "virtual-rig-charuco-7x5-100",
}
WHITE, BLACK = 225.0, 28.0  # grey levels of the print
MIN_FACING = math.cos(math.radians(80))  # seen nearly edge-on it is not drawn
#: samples across each pixel, per axis (the module's docstring): 3 × 3 a pixel
SUBSAMPLES = 3
_OFFSETS = tuple((k + 0.5) / SUBSAMPLES - 0.5 for k in range(SUBSAMPLES))  # px about the centre


@dataclass(frozen=True)
class BoardPicture:
    """A board's print: its grey picture, pixels per mm, where the board's origin lies in it, and
    its corners in board millimetres (z = 0), in the order OpenCV numbers them."""

    kind: BoardKind
    image: npt.NDArray[np.float32]
    px_per_mm: float
    origin_px: tuple[float, float]
    corners_mm: Array

    @property
    def name(self) -> str:
        return BOARD_NAMES[self.kind]

    def outline_mm(self) -> Array:
        """The print's edge in board mm (z = 0), subdivided so it bends with a lens."""
        h, w = self.image.shape
        x0, y0 = (-self.origin_px[0] / self.px_per_mm, -self.origin_px[1] / self.px_per_mm)
        x1, y1 = x0 + w / self.px_per_mm, y0 + h / self.px_per_mm
        box = np.array([[x0, y0, 0], [x1, y0, 0], [x1, y1, 0], [x0, y1, 0]], dtype=np.float64)
        e = np.linspace(0, 1, 8, endpoint=False)[:, None]
        return np.concatenate(
            [a + e * (b - a) for a, b in zip(box, np.roll(box, -1, 0), strict=True)]
        )

    @property
    def centre_mm(self) -> Array:
        return np.asarray(self.outline_mm()[[0, 16]].mean(axis=0), dtype=np.float64)


def _print(raw: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    return (BLACK + raw.astype(np.float32) * ((WHITE - BLACK) / 255.0)).astype(np.float32)


@cache
def board_picture(kind: BoardKind) -> BoardPicture:
    if kind == "chessboard":
        cols, rows, square, px = 9, 6, 80.0, 40  # inner corners; 40 px a square (0.5 px/mm)
        squares = np.indices((rows + 1, cols + 1)).sum(axis=0) % 2  # 1: white
        raw = np.kron(squares, np.ones((px, px))).astype(np.uint8) * 255
        raw = np.pad(raw, px, constant_values=255)  # the white margin
        gx, gy = np.meshgrid(np.arange(cols, dtype=np.float64), np.arange(rows, dtype=np.float64))
        corners = np.stack([gx.ravel(), gy.ravel(), np.zeros(gx.size)], axis=1) * square
        return BoardPicture(kind, _print(raw), px / square, (2.0 * px, 2.0 * px), corners)
    board = charuco()
    px, margin = 60, 30  # 60 px a square (0.6 px/mm), half a square of margin
    raw = board.generateImage((7 * px + 2 * margin, 5 * px + 2 * margin), marginSize=margin)
    corners = np.asarray(board.getChessboardCorners(), dtype=np.float64).reshape(-1, 3)
    return BoardPicture(kind, _print(raw), px / 100.0, (float(margin), float(margin)), corners)


def charuco() -> Any:
    """The virtual rig's ChArUco board as OpenCV builds it (lengths in mm)."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    return cv2.aruco.CharucoBoard((7, 5), 100.0, 75.0, dictionary)


def _rotation(yaw: float, tilt: float) -> Array:
    """Board axes in world coordinates (columns x, y, z) for an upright board facing ``yaw``
    (radians around the vertical) and leaning back by ``tilt``: its x horizontal, its y pointing
    down the board, its z into the board (the printed side faces −z)."""
    facing = np.array([math.cos(yaw), math.sin(yaw), 0.0])  # where the printed side looks
    x = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    down = np.array([0.0, 0.0, -1.0])
    # lean: the board's y turns towards -facing by ``tilt``
    y = math.cos(tilt) * down - math.sin(tilt) * facing
    z = np.cross(x, y)
    return np.stack([x, y, z], axis=1)


FLOOR_ROTATION = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]])


def board_pose(scene: str, kind: BoardKind, t: float) -> tuple[Array, Array]:
    """(R, t): board mm → world mm at world time ``t`` (``scene`` "board" or "floor")."""
    picture = board_picture(kind)
    if scene == "floor":
        return FLOOR_ROTATION.copy(), np.zeros(3)
    w = 2 * math.pi
    rot = _rotation(w * t / 9.0, 0.35 * math.sin(w * t / 5.0))
    centre = np.array(
        [
            900.0 * math.sin(w * t / 11.0),
            500.0 * math.sin(w * t / 7.0 + 1.0),
            1000.0 + 300.0 * math.sin(w * t / 13.0 + 2.0),
        ]
    )
    return rot, centre - rot @ picture.centre_mm


RAY_STEP = 8  # px between the rays traced exactly; those between are interpolated


def undistorted_rays(
    matrix: Array, dist: Array, width: int, height: int
) -> npt.NDArray[np.float32]:
    """Each pixel's ray as (x, y) on the plane z = 1 of the camera (height × width × 2), its lens
    distortion undone by fixed-point iteration to convergence at every :data:`RAY_STEP`-th pixel
    and bilinearly between (the map is smooth: the difference is under 0.001 px here)."""
    k1, k2, p1, p2, k3 = (float(v) for v in np.asarray(dist, dtype=np.float64).ravel()[:5])
    nodes_y = np.arange(0, height - 1 + RAY_STEP, RAY_STEP, dtype=np.float64)
    nodes_x = np.arange(0, width - 1 + RAY_STEP, RAY_STEP, dtype=np.float64)
    v, u = np.meshgrid(nodes_y, nodes_x, indexing="ij")
    xd, yd = (u - matrix[0, 2]) / matrix[0, 0], (v - matrix[1, 2]) / matrix[1, 1]
    x, y = xd.copy(), yd.copy()
    for _ in range(40):
        r2 = x * x + y * y
        radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
        x = (xd - (2 * p1 * x * y + p2 * (r2 + 2 * x * x))) / radial
        y = (yd - (p1 * (r2 + 2 * y * y) + 2 * p2 * x * y)) / radial
    coarse = np.stack([x, y], axis=-1).astype(np.float32)
    gy, gx = np.indices((height, width), dtype=np.float32) / RAY_STEP
    return np.asarray(cv2.remap(coarse, gx, gy, cv2.INTER_LINEAR), dtype=np.float32)


class BoardView:
    """The board as one camera (``matrix``, ``dist``, pose ``rvec``/``tvec`` of the world, image
    ``width`` × ``height``) sees it."""

    def __init__(
        self, matrix: Array, dist: Array, rvec: Array, tvec: Array, width: int, height: int
    ) -> None:
        self.matrix, self.dist, self.width, self.height = matrix, dist, width, height
        self.rot, _ = cv2.Rodrigues(rvec)
        self.tvec = np.asarray(tvec, dtype=np.float64)
        self.centre = -self.rot.T @ self.tvec
        self._rays = undistorted_rays(matrix, dist, width, height)

    def _in_camera(self, rot: Array, t: Array) -> tuple[Array, Array]:
        return self.rot @ rot, self.rot @ t + self.tvec

    def facing(self, rot: Array, t: Array, picture: BoardPicture) -> bool:
        """Whether the printed side faces this camera (not seen edge-on or from behind)."""
        centre = rot @ picture.centre_mm + t
        towards = self.centre - centre
        return float(-(rot[:, 2] @ towards) / np.linalg.norm(towards)) > MIN_FACING

    def project(self, rot: Array, t: Array, points_mm: Array) -> Array:
        r, tc = self._in_camera(rot, t)
        rvec, _ = cv2.Rodrigues(r)
        px, _ = cv2.projectPoints(points_mm.reshape(-1, 1, 3), rvec, tc, self.matrix, self.dist)
        return np.asarray(px, dtype=np.float64).reshape(-1, 2)

    def depth(self, rot: Array, t: Array, picture: BoardPicture) -> float:
        r, tc = self._in_camera(rot, t)
        return float((r @ picture.centre_mm + tc)[2])

    def render(self, rot: Array, t: Array, picture: BoardPicture, img: Image) -> None:
        """Draw the board posed (``rot``, ``t``: board → world) onto ``img``, when it faces this
        camera, each pixel the mean over its area (the module's docstring)."""
        if not self.facing(rot, t, picture):
            return
        outline = self.project(rot, t, picture.outline_mm())
        x0, y0 = np.floor(outline.min(axis=0)).astype(int) - 2
        x1, y1 = np.ceil(outline.max(axis=0)).astype(int) + 3
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, self.width), min(y1, self.height)
        if x1 - x0 < 2 or y1 - y0 < 2:
            return
        map_x, map_y, ahead = self._print_coordinates(rot, t, picture, (x0, y0, x1, y1))
        h, w = picture.image.shape

        def sample(sx: npt.NDArray[np.float32], sy: npt.NDArray[np.float32]) -> Any:
            """The print at (sx, sy), and whether each point lies on it (and ahead)."""
            on = (sx >= -0.5) & (sy >= -0.5) & (sx <= w - 0.5) & (sy <= h - 0.5)
            got = _remap(picture.image, sx, sy)
            return got, on

        centre, on = sample(map_x, map_y)
        on &= ahead
        region = img[y0:y1, x0:x1]
        grey = np.where(on, centre, region[..., 0].astype(np.float32))
        # only a pixel an edge of the print (or of the board) crosses differs from a neighbour, so
        # only those (and their neighbours) are averaged over their area; elsewhere all its
        # samples are its centre's
        square = np.ones((3, 3), np.uint8)
        edge = cv2.dilate(
            (cv2.morphologyEx(grey, cv2.MORPH_GRADIENT, square) > 0.5).astype(np.uint8), square
        )
        ys, xs = np.nonzero(edge)
        if len(ys):
            # across a pixel the map is affine to well under a thousandth of a pixel: step along it
            dx_x, dx_y = np.gradient(map_x, axis=1), np.gradient(map_y, axis=1)
            dy_x, dy_y = np.gradient(map_x, axis=0), np.gradient(map_y, axis=0)
            offsets = np.asarray(_OFFSETS, np.float32)
            ox = np.tile(offsets, len(offsets))[:, None]  # every sample, as rows: x fastest
            oy = np.repeat(offsets, len(offsets))[:, None]
            sx = (map_x[ys, xs] + ox * dx_x[ys, xs] + oy * dy_x[ys, xs]).astype(np.float32)
            sy = (map_y[ys, xs] + ox * dx_y[ys, xs] + oy * dy_y[ys, xs]).astype(np.float32)
            got, inside = sample(sx, sy)
            inside &= ahead[ys, xs]
            share = inside.mean(axis=0)
            background = region[ys, xs, 0].astype(np.float32)
            grey[ys, xs] = np.where(inside, got, 0.0).mean(axis=0) + (1.0 - share) * background
            on[ys, xs] = share > 0
        region[on] = np.clip(grey + 0.5, 0, 255).astype(np.uint8)[on][:, None]

    def _print_coordinates(
        self, rot: Array, t: Array, picture: BoardPicture, box: tuple[int, int, int, int]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """Where each pixel centre of ``box`` (x0, y0, x1, y1) looks on the board's picture (its
        pixel coordinates, for ``cv2.remap``), and whether the board's plane lies ahead of it."""
        x0, y0, x1, y1 = box
        r, tc = self._in_camera(rot, t)
        rays = self._rays[y0:y1, x0:x1]
        normal = r[:, 2]
        along = rays[..., 0] * normal[0] + rays[..., 1] * normal[1] + normal[2]
        with np.errstate(divide="ignore", invalid="ignore"):
            s = float(normal @ tc) / along
        # the point on the board's plane, back in board mm: R^T (s·ray − t)
        px = s * rays[..., 0] - tc[0]
        py = s * rays[..., 1] - tc[1]
        pz = s - tc[2]
        u = r[0, 0] * px + r[1, 0] * py + r[2, 0] * pz
        v = r[0, 1] * px + r[1, 1] * py + r[2, 1] * pz
        scale = picture.px_per_mm
        map_x = (picture.origin_px[0] + u * scale - 0.5).astype(np.float32)
        map_y = (picture.origin_px[1] + v * scale - 0.5).astype(np.float32)
        return map_x, map_y, np.asarray(s > 0)

    def truth(self, rot: Array, t: Array, picture: BoardPicture) -> dict[str, Any]:
        """The board's corners seen by this camera: their image positions (``cv2.projectPoints``)
        and which are in the picture with the printed side facing it."""
        px = self.project(rot, t, picture.corners_mm)
        facing = self.facing(rot, t, picture)
        inside = (
            (px[:, 0] >= 0) & (px[:, 0] < self.width) & (px[:, 1] >= 0) & (px[:, 1] < self.height)
        )
        return {"facing": facing, "corners_px": px, "in_view": inside & facing}


#: ``cv2.remap`` takes maps of fewer than 32767 columns and rows: longer ones are folded to this
_REMAP_WIDTH = 4096


def _remap(
    image: npt.NDArray[Any], sx: npt.NDArray[np.float32], sy: npt.NDArray[np.float32]
) -> Any:
    """``image`` sampled bilinearly at (sx, sy), maps of any shape and length (a board filling
    the picture has over 32767 edge pixels, each sampled 9 times: more than one map row holds)."""
    if max(sx.shape) < _REMAP_WIDTH:
        return cv2.remap(image, sx, sy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    n = sx.size
    rows = -(-n // _REMAP_WIDTH)

    def folded(m: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return np.pad(m.ravel(), (0, rows * _REMAP_WIDTH - n)).reshape(rows, _REMAP_WIDTH)

    got = cv2.remap(
        image, folded(sx), folded(sy), cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return got.ravel()[:n].reshape(sx.shape)
