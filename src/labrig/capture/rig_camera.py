"""The virtual rig: its cameras as free-running frame sources on one world clock, with ground truth.

Each camera is a sensor that exposes frame ``n`` at its own instant on the host's monotonic clock,

    E(n) = epoch + offset + n · period · (1 + drift) + jitter(n),

whether anyone reads it or not. ``n`` counts from the world's epoch (when the rig was created), so
at one instant cameras of the same rate show about the same ``n``, and each frame carries its ``n``
in a pattern of 24 blocks in its top-left corner (:mod:`labrig.capture.frame_tags`). ``read``
waits for the next exposure; a reader more than :data:`BUFFERS` frames behind loses the oldest
(the sensor's buffers are overwritten), as a real camera does, and a frame can be dropped at
random. Each frame
comes with the host time of its exposure (as a camera driver stamps its buffers, whatever the
reader's scheduling) and the camera's own clock, which ticks exactly one period per frame: a
camera given a drift drifts against the host.

The content of frame ``n`` is the world (:mod:`labrig.capture.rig_world`) at t = (E(n) - epoch) s,
jitter included. :meth:`VirtualRig.truth` gives it back for any camera, rate and ``n``: exposure
instant, markers and what each camera sees, how lit the frame is, and whether it was dropped.

Threading: a :class:`VirtualRig` may be read from any thread (its timing is set before cameras are
opened); each :class:`VirtualRigCamera` from one thread at a time (its grab thread).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.frame_tags import write_frame_tag
from labrig.capture.rig_board import BoardKind
from labrig.capture.rig_world import (
    BOARD_SCENES,
    DEFAULT_CAMERAS,
    FLASH_GAIN,
    MAX_CAMERAS,
    RigSceneName,
    RigView,
    flash_instants,
    lamp_fraction,
    rig_camera,
)
from labrig.capture.sources import Image, Mode, TimedFrame
from labrig.capture.virtual import UnsupportedModeError, noise_bank

RIG_CAMERA_NAME = "Labrig virtual rig camera"
RIG_ADDRESS_PREFIX = "rig-"
BUFFERS = 4  # frames a camera holds for a reader that is late


def rig_device_id(index: int) -> str:
    """``virtual:rig-1`` … for cameras 0 …"""
    return f"virtual:{RIG_ADDRESS_PREFIX}{index + 1}"


def rig_camera_index(address: str) -> int | None:
    """The camera index of a virtual rig camera's address (``rig-3`` → 2), else None."""
    if not address.startswith(RIG_ADDRESS_PREFIX):
        return None
    number = address.removeprefix(RIG_ADDRESS_PREFIX)
    if not number.isdigit() or not 1 <= int(number) <= MAX_CAMERAS:
        return None
    return int(number) - 1


def rig_devices() -> list[DeviceInfo]:
    """The virtual rig's twelve cameras, as discovery lists them."""
    return [
        DeviceInfo(
            device_id=rig_device_id(i),
            kind=DeviceKind.VIRTUAL,
            name=f"{RIG_CAMERA_NAME} {i + 1} ({rig_camera(i).place})",
            address=f"{RIG_ADDRESS_PREFIX}{i + 1}",
            descriptors={"place": rig_camera(i).place, "scenes": "markers, flash, board, floor"},
        )
        for i in range(MAX_CAMERAS)
    ]


@dataclass(frozen=True)
class CameraTiming:
    """How one virtual rig camera's clock departs from the ideal: a constant ``offset_ms`` from the
    world's frame instants, random ``jitter_ms`` (standard deviation, clipped at three, and to 0.4
    of a period), a ``drift_ppm`` of its frame period against the host, a ``drop_probability`` per
    frame, and ``fail_after_s``: it stops answering that long after it is opened (a pulled
    cable)."""

    offset_ms: float = 0.0
    jitter_ms: float = 0.0
    drift_ppm: float = 0.0
    drop_probability: float = 0.0
    fail_after_s: float | None = None


def _unit(seed: int, camera: int, n: int, salt: int) -> float:
    """A uniform number in (0, 1), a pure function of its arguments (splitmix64)."""
    z = seed * 0x9E3779B97F4A7C15 + camera * 0xBF58476D1CE4E5B9 + n * 0x94D049BB133111EB + salt
    z &= (1 << 64) - 1
    for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        z = ((z ^ (z >> shift)) * mult) & ((1 << 64) - 1)
    z ^= z >> 31
    return (z + 0.5) / 2.0**64


@dataclass
class VirtualRig:
    """The virtual rig's world clock, scene and each camera's timing. ``epoch_ns``: the host
    monotonic instant of world time 0 (default: when the rig is made)."""

    markers: int = 4
    seed: int = 0
    noise: float = 2.0
    # > 0: each camera renders ``replay`` frames once, when first opened in a mode, and shows them
    # again in turn as they are, as a video played in a loop (the same read-only arrays; their
    # times and counter stay true, their tags and pictures are of the first ``replay`` frames): a
    # camera that costs the host nothing, as a real one, for measuring the recorder alone beside
    # plain VideoWriter loops writing pre-rendered frames.
    replay: int = 0
    scene: RigSceneName = "markers"
    board: BoardKind = "chessboard"  # the board of the "board" and "floor" scenes
    flash_gain: float = FLASH_GAIN  # grey levels the lamp adds to a frame lit throughout
    epoch_ns: int = field(default_factory=time.monotonic_ns)
    timing: dict[int, CameraTiming] = field(default_factory=dict)
    # with ``replay``: the frames each camera shows again, by camera and mode (shared by every
    # opening of a camera: its probe's and its recording's)
    _replays: dict[tuple[int, Mode], list[Image]] = field(
        default_factory=dict, repr=False, compare=False
    )
    # the virtual force plate's clock (:mod:`labrig.capture.virtual_instrument`)
    plate_timing: CameraTiming = field(default_factory=CameraTiming)

    def __post_init__(self) -> None:
        if not 3 <= self.markers <= 6:
            raise ValueError(f"the virtual rig has 3-6 markers, not {self.markers}")

    def timing_of(self, camera: int) -> CameraTiming:
        return self.timing.get(camera, CameraTiming())

    def exposure_ns(self, camera: int, fps: float, n: int) -> int:
        """Host monotonic instant camera ``camera`` at ``fps`` exposes frame ``n``."""
        t = self.timing_of(camera)
        period = 1e9 / fps
        jitter = 0.0
        if t.jitter_ms > 0:
            u1, u2 = _unit(self.seed, camera, n, 1), _unit(self.seed, camera, n, 2)
            normal = math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
            limit = min(3 * t.jitter_ms * 1e6, 0.4 * period)
            jitter = max(-limit, min(limit, normal * t.jitter_ms * 1e6))
        base = self.epoch_ns + t.offset_ms * 1e6 + n * period * (1 + t.drift_ppm * 1e-6)
        return round(base + jitter)

    def first_frame_after(self, camera: int, fps: float, mono_ns: int) -> int:
        """The first frame ``n`` whose exposure is due at or after ``mono_ns`` (give or take its
        jitter)."""
        t = self.timing_of(camera)
        period = 1e9 / fps * (1 + t.drift_ppm * 1e-6)
        return max(0, math.ceil((mono_ns - self.epoch_ns - t.offset_ms * 1e6) / period))

    def dropped(self, camera: int, n: int) -> bool:
        """Whether camera ``camera`` drops frame ``n`` at random (its ``drop_probability``)."""
        p = self.timing_of(camera).drop_probability
        return p > 0 and _unit(self.seed, camera, n, 3) < p

    def world_time(self, camera: int, fps: float, n: int) -> float:
        """The world time (s) frame ``n`` of ``camera`` at ``fps`` shows."""
        return (self.exposure_ns(camera, fps, n) - self.epoch_ns) / 1e9

    def truth(self, camera: int, mode: Mode, n: int) -> dict[str, Any]:
        """What frame ``n`` of ``camera`` in ``mode`` shows: its exposure instant (host monotonic
        ns and world s), whether it was dropped, how lit it is, and each marker."""
        t = self.world_time(camera, mode.fps, n)
        half = 0.5 / mode.fps
        view = _view(camera, mode.width, mode.height, self.markers)
        return {
            "camera": camera,
            "place": view.camera.place,
            "frame": n,
            "exposure_mono_ns": self.exposure_ns(camera, mode.fps, n),
            "t": t,
            "dropped": self.dropped(camera, n),
            "lit": lamp_fraction(t - half, t + half) if self.scene == "flash" else 0.0,
            "markers": [] if self.scene in BOARD_SCENES else view.truth(t),
            "board": view.board_truth(self.scene, self.board, t)
            if self.scene in BOARD_SCENES
            else None,
        }

    def flashes(self, start_s: float, end_s: float) -> list[float]:
        """The world times the lamp comes on between two world times (the ``flash`` scene)."""
        return flash_instants(start_s, end_s)

    def ground_truth(self, cameras: int = DEFAULT_CAMERAS) -> dict[str, Any]:
        """The rig's fixed truth: each camera's pose and lens, and the markers' paths' names."""
        return {
            "epoch_mono_ns": self.epoch_ns,
            "scene": self.scene,
            "cameras": [rig_camera(i).to_json() for i in range(cameras)],
            "timing": {str(i): vars(self.timing_of(i)) for i in range(cameras)},
        }

    def replayed(self, camera: int, mode: Mode, render: Callable[[int], Image]) -> list[Image]:
        """The ``replay`` frames camera ``camera`` shows again in ``mode``, rendered (by
        ``render``) the first time they are asked for."""
        with _replay_lock:  # the views' lock is taken while rendering
            key = (camera, mode)
            if key not in self._replays:
                frames = [render(n) for n in range(self.replay)]
                for frame in frames:
                    frame.flags.writeable = False  # shared by every frame that shows it
                self._replays[key] = frames
            return self._replays[key]

    def camera(self, index: int) -> VirtualRigCamera:
        return VirtualRigCamera(self, index)


_views: dict[tuple[int, int, int, int], RigView] = {}
_views_lock = threading.Lock()
_replay_lock = threading.Lock()


def _view(camera: int, width: int, height: int, markers: int) -> RigView:
    key = (camera, width, height, markers)
    with _views_lock:
        if key not in _views:
            _views[key] = RigView(rig_camera(camera), width, height, markers)
        return _views[key]


_noises: dict[tuple[tuple[int, ...], float, int], list[tuple[Image, Image]]] = {}


def _noise(shape: tuple[int, ...], sigma: float, seed: int) -> list[tuple[Image, Image]]:
    """One bank of sensor noise per image size, shared by the rig's cameras (read only)."""
    key = (shape, sigma, seed)
    with _views_lock:
        if key not in _noises:
            _noises[key] = noise_bank(shape, sigma, seed)
        return _noises[key]


class VirtualRigCamera:
    """One camera of a :class:`VirtualRig` as a frame source (see the module's docstring)."""

    def __init__(self, rig: VirtualRig, index: int) -> None:
        self.rig, self.index = rig, index
        self._mode = Mode(1280, 720, 30.0)
        self._next: int | None = None
        self._opened_ns = 0
        self._open = False
        self._noise: list[tuple[Image, Image]] = []
        self._replayed: list[Image] = []  # with ``rig.replay``: the frames shown again

    @property
    def name(self) -> str:
        return f"{RIG_CAMERA_NAME} {self.index + 1}"

    def open(self, mode: Mode | None = None) -> Mode:
        mode = mode or self._mode
        if mode.width < 320 or mode.height < 240 or not 0 < mode.fps <= 240:
            raise UnsupportedModeError(
                f"the virtual rig cameras cannot deliver {mode.label()}: they need at least "
                "320x240 and 1-240 fps"
            )
        if mode.pixel_format != "BGR":
            raise UnsupportedModeError(
                f"the virtual rig cameras deliver BGR, not {mode.pixel_format}"
            )
        shape = (mode.height, mode.width, 3)
        self._noise = _noise(shape, self.rig.noise, self.rig.seed) if self.rig.noise > 0 else []
        self._mode = mode
        if self.rig.replay > 0:
            self._replayed = self.rig.replayed(self.index, mode, self._render)
        self._opened_ns = time.monotonic_ns()
        self._next, self._open = None, True
        return mode

    def render(self, n: int) -> Image:
        """Frame ``n`` of the current mode (the world at its exposure, its tag in the corner)."""
        if self._replayed:  # shown again as it is, tag and all, costing nothing: read only
            return self._replayed[n % len(self._replayed)]
        return self._render(n)

    def _render(self, n: int) -> Image:
        mode = self._mode
        view = _view(self.index, mode.width, mode.height, self.rig.markers)
        t = self.rig.world_time(self.index, mode.fps, n)
        img = view.background.copy()
        if self.rig.scene in BOARD_SCENES:
            view.render_board(self.rig.scene, self.rig.board, t, img)
        else:
            view.render(t, img)
        if self._noise:
            add, sub = self._noise[(n + self.index) % len(self._noise)]
            cv2.add(img, add, dst=img)
            cv2.subtract(img, sub, dst=img)
        if self.rig.scene == "flash":
            half = 0.5 / mode.fps
            if lit := lamp_fraction(t - half, t + half):
                cv2.add(img, np.full_like(img, round(lit * self.rig.flash_gain)), dst=img)
        write_frame_tag(img, n)
        return img

    def read_timed(self, timeout_s: float = 2.0) -> TimedFrame | None:
        """The next frame with its times; None when closed, failed (``fail_after_s``) or nothing
        came in ``timeout_s``."""
        if not self._open:
            return None
        fps, rig, now = self._mode.fps, self.rig, time.monotonic_ns()
        fail = rig.timing_of(self.index).fail_after_s
        if fail is not None and now - self._opened_ns >= fail * 1e9:
            time.sleep(max(0.0, min(timeout_s, 0.05)))
            return None
        if self._next is None:
            self._next = rig.first_frame_after(self.index, fps, now)
        newest = rig.first_frame_after(self.index, fps, now) - 1
        if newest - self._next >= BUFFERS:  # the reader was late: the oldest buffers are lost
            self._next = newest - BUFFERS + 1
        while rig.dropped(self.index, self._next):
            self._next += 1
        due = rig.exposure_ns(self.index, fps, self._next)
        wait = (due - time.monotonic_ns()) / 1e9
        if wait > timeout_s:
            time.sleep(max(timeout_s, 0.0))
            return None
        if wait > 0:
            time.sleep(wait)
        n = self._next
        self._next += 1
        return TimedFrame(self.render(n), due, n, round(n * 1e9 / fps))

    def read(self, timeout_s: float = 2.0) -> Image | None:
        frame = self.read_timed(timeout_s)
        return frame.image if frame is not None else None

    def close(self) -> None:
        self._open = False
