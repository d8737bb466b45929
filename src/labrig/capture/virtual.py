"""The built-in virtual camera: a synthetic scene rendered with OpenCV from a known camera model.

With it the app runs with no hardware, and tests get ground truth. One camera (device
``virtual:markers``, shown as ``"Labrig virtual camera"``) shows one of three scenes, switched as a
technician holds a board up to a real camera (:class:`SceneSwitch`):

markers moving on a plane, the calibration board held up and moved, or the board lying still on
the plane (:mod:`labrig.capture.virtual_scenes`, which also holds the lens model). Because the
scenes share the camera, a calibration made from its board is bound to the camera and mode that
record the attempts. Frame ``n`` shows the scene at t = n / fps: the image and
:meth:`VirtualCamera.truth` are pure functions of the frame index and the scene shown; only the
pacing of ``read`` depends on the clock.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from statistics import NormalDist
from typing import Any

import cv2
import numpy as np

from labrig.capture.frame_tags import write_frame_tag
from labrig.capture.sources import Image, Mode
from labrig.capture.virtual_scenes import (
    SCENE_LABELS,
    SCENE_PURPOSE,
    SCENES,
    BoardScene,
    CameraModel,
    MarkersScene,
    PlaneBoardScene,
    SceneName,
)
from labrig.errors import LabrigError

__all__ = [
    "DEFAULT_MODE",
    "MARKERS_DEVICE_ID",
    "SCENES",
    "SCENE_LABELS",
    "SCENE_PURPOSE",
    "VIRTUAL_ADDRESS",
    "VIRTUAL_CAMERA_NAME",
    "CameraModel",
    "SceneName",
    "SceneSwitch",
    "UnsupportedModeError",
    "UnsupportedSceneError",
    "VirtualCamera",
]
# the mode the demo, the self-test and the release check record in
DEFAULT_MODE = Mode(1280, 720, 30.0)


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


def noise_bank(shape: tuple[int, ...], sigma: float, seed: int) -> list[tuple[Image, Image]]:
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
    the camera shows ``scene`` throughout. ``tag_frames``: each frame's index is drawn in its
    top-left corner (:func:`labrig.capture.frame_tags.read_frame_tag` reads it back).

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
        tag_frames: bool = False,
    ) -> None:
        if scene not in SCENES:
            raise ValueError(f"unknown virtual scene {scene!r}: 'markers', 'board' or 'plane'")
        self.scene_name, self.paced, self.seed, self.noise = scene, paced, seed, noise
        self._scene_of = scene_of
        self.frames_limit, self.fail_after, self._board = frames_limit, fail_after, board
        self.tag_frames = tag_frames  # each frame's index drawn in its top-left corner
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
        self._noise = noise_bank(shape, self.noise, self.seed) if self.noise > 0 else []

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
        if self.tag_frames:
            write_frame_tag(img, frame_index)
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
