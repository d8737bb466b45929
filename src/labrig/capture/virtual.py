"""The built-in virtual camera: a synthetic scene rendered with OpenCV from a known camera model.

With it the app runs with no hardware, and tests get ground truth. One camera (device
``virtual:markers``, shown as ``"Labrig virtual camera"``) shows one of three scenes, switched as a
technician holds a board up to a real camera (:class:`SceneSwitch`):

* ``"markers"``: a flat measurement plane 1000 mm in front of the camera, slightly tilted, with
  three bright circular markers (8 mm radius) moving on known paths in plane coordinates (mm): a
  circle, a line travelled back and forth, a Lissajous figure.
* ``"board"``: a chessboard (default 9×6 inner corners, 25 mm squares, white margin) held up and
  moved smoothly, covering tilts and image regions, so frames of it calibrate a camera.
* ``"plane"``: the same chessboard lying still on the markers' measurement plane: the view that
  gives the plane's scale (mm).

Because the scenes share the camera, a calibration made from its board is bound to the camera and
mode that record the attempts.

Points are projected with ``cv2.projectPoints``, so the lens distortion in the images is real. Frame
``n`` shows the scene at t = n / fps: the image and :meth:`VirtualCamera.truth` are pure functions
of the frame index and the scene shown; only the pacing of ``read`` depends on the clock.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from labrig.capture.sources import Image, Mode
from labrig.errors import LabrigError

SceneName = Literal["markers", "board", "plane"]
SCENES: tuple[SceneName, ...] = ("markers", "board", "plane")
SCENE_LABELS: dict[SceneName, str] = {
    "markers": "Markers moving on the plane",
    "board": "Calibration board held up and moved",
    "plane": "Calibration board lying still on the plane",
}
Array = npt.NDArray[np.float64]
# the mode the demo, the self-test and the release check record in
DEFAULT_MODE = Mode(1280, 720, 30.0)
# fixed-point bits for the fill functions: sub-pixel edges, so centroids and corners are exact
_SHIFT = 4


class UnsupportedModeError(LabrigError):
    """A mode the virtual camera cannot deliver."""

    code = "LABRIG_MODE_UNSUPPORTED"


VIRTUAL_CAMERA_NAME = "Labrig virtual camera"  # the name it shows in device lists
VIRTUAL_ADDRESS = "markers"  # its address; kept from when each scene was a camera of its own
MARKERS_DEVICE_ID = f"virtual:{VIRTUAL_ADDRESS}"  # the camera the demo records with


class SceneSwitch:
    """Which scene each virtual camera shows now, by device id (``"markers"`` until switched).

    Every source opened on a camera (the preview, the recorder) reads the switch at each frame, so
    flipping it is seen at once, as a board held up to a real camera is. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scenes: dict[str, SceneName] = {}

    def get(self, device_id: str) -> SceneName:
        with self._lock:
            return self._scenes.get(device_id, "markers")

    def set(self, device_id: str, scene: SceneName) -> None:
        if scene not in SCENES:
            raise UnsupportedSceneError(
                f"the virtual camera has no scene {scene!r}: pick one of {', '.join(SCENES)}"
            )
        with self._lock:
            self._scenes[device_id] = scene

    def follow(self, device_id: str) -> Callable[[], SceneName]:
        """A reader of ``device_id``'s scene, for :class:`VirtualCamera`'s ``scene_of``."""
        return lambda: self.get(device_id)


class UnsupportedSceneError(LabrigError):
    code = "LABRIG_SCENE_UNKNOWN"


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


def _noise_bank(shape: tuple[int, ...], sigma: float, seed: int) -> list[tuple[Image, Image]]:
    """A few frames of sensor noise as (add, subtract) pairs; uniform bytes mapped through a
    normal quantile table."""
    q = [NormalDist(0.0, sigma).inv_cdf((k + 0.5) / 256) for k in range(256)]
    lut_add = np.clip(np.round(q), 0, 255).astype(np.uint8)
    lut_sub = np.clip(np.round([-v for v in q]), 0, 255).astype(np.uint8)
    rng = np.random.default_rng(seed)
    draws = (rng.integers(0, 256, size=shape, dtype=np.uint8) for _ in range(4))
    return [(lut_add[u], lut_sub[u]) for u in draws]


class VirtualCamera:
    """The virtual camera as a :class:`~labrig.capture.sources.FrameSource`.

    ``paced``: ``read`` waits for each frame's due time on ``time.monotonic()`` (fps frames a
    second; a reader that falls behind gets every frame, late, never a burst); unpaced, it returns
    as fast as it renders. ``frames_limit``: the stream ends after that many frames. ``fail_after``:
    the device stops answering after that many frames (a pulled cable). ``seed`` picks the
    sensor-noise pattern (``noise`` is its sigma in grey levels; 0 turns it off). ``scene_of``:
    read before each frame, it switches the scene shown (a :meth:`SceneSwitch.follow`); without it
    the camera shows ``scene`` throughout.

    Threading: ``open``/``read``/``close`` from one thread at a time (the grab thread); ``render``
    and ``truth`` may be called from any thread.
    """

    def __init__(
        self,
        scene: SceneName = "markers",
        model: CameraModel | None = None,
        *,
        paced: bool = True,
        seed: int = 0,
        board: tuple[int, int, float] = (9, 6, 25.0),
        noise: float = 2.0,
        frames_limit: int | None = None,
        fail_after: int | None = None,
        scene_of: Callable[[], SceneName] | None = None,
    ) -> None:
        if scene not in SCENES:
            raise ValueError(f"unknown virtual scene {scene!r}: 'markers', 'board' or 'plane'")
        self.scene_name, self.paced, self.seed, self.noise = scene, paced, seed, noise
        self._scene_of = scene_of
        self.frames_limit, self.fail_after, self._board = frames_limit, fail_after, board
        self._base_model, self._index, self._opened = model or CameraModel(), 0, False
        self._due: float | None = None
        self._configure(DEFAULT_MODE)

    @property
    def name(self) -> str:
        return VIRTUAL_CAMERA_NAME

    @property
    def model(self) -> CameraModel:
        """The camera model at the current mode's size."""
        return self._scene.model

    @property
    def frame_index(self) -> int:
        """Index of the frame the next ``read`` delivers (= frames delivered since ``open``)."""
        return self._index

    def _configure(self, mode: Mode) -> None:
        self._mode = mode
        self._shown: tuple[MarkersScene | BoardScene, Image] = self._build_scene(self.scene_name)
        shape = (mode.height, mode.width, 3)
        self._noise = _noise_bank(shape, self.noise, self.seed) if self.noise > 0 else []

    def _build_scene(self, name: SceneName) -> tuple[MarkersScene | BoardScene, Image]:
        """The scene ``name`` at the current mode's size, and its background image."""
        mode = self._mode
        model = self._base_model.scaled(mode.width, mode.height)
        scene: MarkersScene | BoardScene
        if name == "markers":
            scene = MarkersScene(model)
        else:
            scene = (PlaneBoardScene if name == "plane" else BoardScene)(model, *self._board)
        background = np.empty((mode.height, mode.width, 3), np.uint8)
        background[:] = scene.background
        return scene, background

    def _current(self) -> tuple[MarkersScene | BoardScene, Image]:
        """The scene shown now and its background, switched first when ``scene_of`` names
        another."""
        wanted = self._scene_of() if self._scene_of is not None else self.scene_name
        if wanted != self.scene_name:
            # one assignment: a render on another thread sees the old scene or the new, whole
            self._shown, self.scene_name = self._build_scene(wanted), wanted
        return self._shown

    @property
    def _scene(self) -> MarkersScene | BoardScene:
        return self._current()[0]

    def open(self, mode: Mode | None = None) -> Mode:
        mode = mode or DEFAULT_MODE
        if (
            mode.width <= 0
            or mode.height <= 0
            or not (0 < mode.fps < math.inf)
            or mode.pixel_format != "BGR"
        ):
            raise UnsupportedModeError(
                f"the virtual camera cannot deliver {mode.label()}: it needs a positive size, "
                "a frame rate above 0 and pixel format BGR"
            )
        if mode != self._mode:
            self._configure(mode)
        self._index, self._due, self._opened = 0, None, True
        return mode

    def render(self, frame_index: int) -> Image:
        """Frame ``frame_index`` of the current mode, without touching the stream position."""
        scene, background = self._current()
        img = background.copy()
        scene.render(frame_index / self._mode.fps, img)
        if self._noise:
            add, sub = self._noise[frame_index % len(self._noise)]
            cv2.add(img, add, dst=img)
            cv2.subtract(img, sub, dst=img)
        return img

    def truth(self, frame_index: int) -> dict[str, Any]:
        """Ground truth for frame ``frame_index``: marker positions (mm, px) or the board's pose
        and corners (px)."""
        return self._scene.truth(frame_index / self._mode.fps)

    def read(self, timeout_s: float = 2.0) -> Image | None:
        """The next frame; None if closed, ended (``frames_limit``), failed (``fail_after``) or
        not due in time."""
        stop = min(n for n in (self.frames_limit, self.fail_after, math.inf) if n is not None)
        if not self._opened or self._index >= stop:
            return None
        if self.paced and not self._wait_due(timeout_s):
            return None
        frame = self.render(self._index)
        self._index += 1
        return frame

    def _wait_due(self, timeout_s: float) -> bool:
        period, now = 1.0 / self._mode.fps, time.monotonic()
        if self._due is None or now - self._due > period:
            # first frame, or the reader fell behind: restart the schedule rather than burst
            self._due = now
        wait = self._due - now
        if wait > timeout_s:
            time.sleep(max(timeout_s, 0.0))
            return False
        if wait > 0:
            time.sleep(wait)
        self._due += period
        return True

    def close(self) -> None:
        self._opened = False
