"""The virtual force plate: a 6-channel, 1 kHz instrument of the virtual rig, on its own clock.

It stands at the world origin of the virtual rig (:mod:`labrig.capture.rig_world`) and feels the
scene's events: someone of 70 kg stands on it throughout, and lands a jump each time the flash
lamp comes on (world t = 1, 6, 11 … s), adding :data:`LANDING_N` to Fz for the lamp's 0.25 s. The
centre of pressure follows the ``steady`` marker's path scaled to the plate, so the moments are
Fz times it. Sample ``k`` is taken at

    S(k) = epoch + offset + k · period · (1 + drift)

on the host's monotonic clock, whoever reads it, and delivered in blocks of :data:`BLOCK` samples
once the block's last sample is taken (+ jitter, as a USB link delivers). A reader more than
:data:`BUFFERS` blocks behind loses the oldest; a block can be dropped at random, and the plate can
stop answering after ``fail_after_s`` (:class:`~labrig.capture.rig_camera.CameraTiming`, the rig's
``plate_timing``). :func:`plate_truth` gives the noise-free forces at any world time; the recorded
values add a little sensor noise, a pure function of the block.

Threading: one reader at a time (its grab thread).
"""

from __future__ import annotations

import math
import time

import numpy as np

from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.rig_camera import VirtualRig, _unit
from labrig.capture.rig_world import FLASH_EVERY_S, FLASH_FIRST_S, FLASH_LENGTH_S
from labrig.capture.samples import Channel, SampleBlock, SampleMode, Values
from labrig.capture.virtual import UnsupportedModeError

PLATE_NAME = "Labrig virtual force plate"
PLATE_ADDRESS = "plate-1"
PLATE_DEVICE_ID = f"virtual:{PLATE_ADDRESS}"
PLATE_MODE = SampleMode(
    1000.0,
    (
        Channel("Fx", "N"),
        Channel("Fy", "N"),
        Channel("Fz", "N"),
        Channel("Mx", "Nm"),
        Channel("My", "Nm"),
        Channel("Mz", "Nm"),
    ),
)
BLOCK = 20  # samples per block: 50 blocks a second at 1 kHz
BUFFERS = 64  # blocks held for a reader that is late
WEIGHT_N = 686.5  # 70 kg standing
LANDING_N = 900.0  # added to Fz while the lamp is on
NOISE_N = 0.5
PLATE_CAMERA = -1  # the plate's index in the rig's pseudo-random streams


def plate_device() -> DeviceInfo:
    return DeviceInfo(
        device_id=PLATE_DEVICE_ID,
        kind=DeviceKind.VIRTUAL_INSTRUMENT,
        name=PLATE_NAME,
        address=PLATE_ADDRESS,
        descriptors={"place": "plate", "channels": "Fx Fy Fz Mx My Mz", "rate_hz": 1000},
    )


def landing(t: Values) -> Values:
    """1 while the flash lamp is on (a landing), else 0, at world times ``t`` (s)."""
    phase = t - FLASH_FIRST_S
    return ((phase >= 0) & (np.mod(phase, FLASH_EVERY_S) < FLASH_LENGTH_S)).astype(np.float64)


def plate_truth(t: Values) -> Values:
    """The noise-free forces (N) and moments (N·m) at world times ``t``: len(t) × 6."""
    t = np.asarray(t, dtype=np.float64)
    fz = WEIGHT_N + LANDING_N * landing(t)
    # the centre of pressure follows the steady marker's circle (8 s a turn), scaled to the plate
    angle = 2 * math.pi * t / 8.0
    cop_x, cop_y = 0.20 * np.cos(angle), 0.12 * np.sin(angle)
    fx = 25.0 * np.sin(2 * math.pi * 0.5 * t)
    fy = 15.0 * np.cos(2 * math.pi * 0.5 * t)
    return np.column_stack([fx, fy, fz, fz * cop_y, -fz * cop_x, 1.5 * np.sin(angle)])


class VirtualForcePlate:
    """The virtual rig's force plate as a sample source (see the module's docstring)."""

    def __init__(self, rig: VirtualRig) -> None:
        self.rig = rig
        self._next: int | None = None
        self._opened_ns = 0
        self._open = False

    @property
    def period_ns(self) -> float:
        return 1e9 / PLATE_MODE.rate_hz * (1 + self.rig.plate_timing.drift_ppm * 1e-6)

    def sample_ns(self, k: int) -> int:
        """Host monotonic instant sample ``k`` is taken."""
        t = self.rig.plate_timing
        return round(self.rig.epoch_ns + t.offset_ms * 1e6 + k * self.period_ns)

    def world_time(self, k: Values) -> Values:
        return (self.rig.plate_timing.offset_ms * 1e6 + k * self.period_ns) / 1e9

    def values(self, first: int, count: int) -> Values:
        """Samples ``first`` … as recorded: the truth and a little sensor noise."""
        k = np.arange(first, first + count, dtype=np.float64)
        noise = np.random.default_rng((self.rig.seed, first, count)).uniform(-1, 1, (count, 6))
        return plate_truth(self.world_time(k)) + noise * NOISE_N

    def open(self, mode: SampleMode | None = None) -> SampleMode:
        if mode is not None and mode != PLATE_MODE:
            raise UnsupportedModeError(
                f"the virtual force plate streams {PLATE_MODE.label()}, not {mode.label()}"
            )
        self._opened_ns = time.monotonic_ns()
        self._next, self._open = None, True
        return PLATE_MODE

    def _due(self, block: int) -> int:
        """When block ``block`` is delivered: once its last sample is taken, plus jitter."""
        t = self.rig.plate_timing
        jitter = 0.0
        if t.jitter_ms > 0:
            jitter = _unit(self.rig.seed, PLATE_CAMERA, block, 7) * t.jitter_ms * 2e6
        return round(self.sample_ns((block + 1) * BLOCK - 1) + jitter)

    def read_block(self, timeout_s: float = 2.0) -> SampleBlock | None:
        if not self._open:
            return None
        t, now = self.rig.plate_timing, time.monotonic_ns()
        if t.fail_after_s is not None and now - self._opened_ns >= t.fail_after_s * 1e9:
            time.sleep(max(0.0, min(timeout_s, 0.05)))
            return None
        elapsed = (now - self.rig.epoch_ns - t.offset_ms * 1e6) / self.period_ns
        newest = max(0, math.floor(elapsed / BLOCK) - 1)  # the newest block already delivered
        if self._next is None:
            self._next = newest + 1
        if newest - self._next >= BUFFERS:  # the reader was late: the oldest blocks are lost
            self._next = newest - BUFFERS + 1
        while t.drop_probability > 0 and _unit(self.rig.seed, PLATE_CAMERA, self._next, 3) < (
            t.drop_probability
        ):
            self._next += 1
        wait = (self._due(self._next) - time.monotonic_ns()) / 1e9
        if wait > timeout_s:
            time.sleep(max(timeout_s, 0.0))
            return None
        if wait > 0:
            time.sleep(wait)
        block, self._next = self._next, self._next + 1
        first = block * BLOCK
        return SampleBlock(
            first,
            self.sample_ns(first),
            round(first * 1e9 / PLATE_MODE.rate_hz),
            self.values(first, BLOCK),
        )

    def close(self) -> None:
        self._open = False
