"""Verification: a device is used only once the inventory lists it and a probe shows it delivers.

Cameras (UVC, IP, virtual) are probed: opened in the requested mode, read for
``probe_seconds``, and judged on the frames that actually arrived — their size and
their rate measured on ``time.monotonic()`` (what a camera *reports* is not
evidence: MJPEG streams claim 25 fps whatever they send). Instruments that stream samples are
probed for their rate (:mod:`labrig.capture.verify_instrument`); other USB instruments and watch
folders give no stream: they are verified by inventory match and presence only.

A pass becomes ``capture.device.connected`` (EVT-01, :meth:`Verification.to_event_payload`);
a refusal carries a stable code and words that tell the technician what to do.
Threading: blocking for about ``probe_seconds``; call from a worker thread.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2

from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.inventory import ANY_FORMAT, FRAME_KINDS, Inventory
from labrig.capture.opencv_source import OpenCVSource
from labrig.capture.rig_camera import VirtualRig, rig_camera_index
from labrig.capture.sources import FrameSource, Mode, read_timed
from labrig.capture.verdicts import (
    DeviceRefusedError,
    MeasuredMode,
    Refusal,
    Verification,
    redact,
    refuse,
    who,
)
from labrig.capture.verify_instrument import OpenSamples, probe_instrument, streams_samples
from labrig.capture.virtual import VIRTUAL_ADDRESS, SceneSwitch, VirtualCamera
from labrig.errors import LabrigError

__all__ = [
    "DeviceRefusedError",
    "MeasuredMode",
    "Refusal",
    "Verification",
    "default_open_source",
    "verify",
]

OpenSource = Callable[[DeviceInfo], FrameSource]
# Frames buffered while the device opened arrive in a burst: the rate is measured only after this
# settling time.
SETTLE_S = 0.25


def default_open_source(
    device: DeviceInfo, scenes: SceneSwitch | None = None, rig: VirtualRig | None = None
) -> FrameSource:
    """The frame source for a camera device: the virtual camera (showing the scene ``scenes``
    has for it, markers without), a camera of the virtual rig ``rig`` (a new one without), or
    OpenCV by index or by URL."""
    if device.kind == DeviceKind.VIRTUAL and device.address == VIRTUAL_ADDRESS:
        follow = scenes.follow(device.device_id) if scenes is not None else None
        return VirtualCamera(scene_of=follow)
    if (
        device.kind == DeviceKind.VIRTUAL
        and (index := rig_camera_index(device.address)) is not None
    ):
        return (rig or VirtualRig()).camera(index)
    if device.kind == DeviceKind.UVC:
        return OpenCVSource(int(device.address), device.descriptors.get("api"))
    if device.kind == DeviceKind.IP:
        return OpenCVSource(device.address, cv2.CAP_FFMPEG)
    raise LabrigError(
        f"{device.name} is a {device.kind.value} device and gives no picture stream",
        code=Refusal.OPEN_FAILED,
    )


def verify(
    device: DeviceInfo,
    requested_mode: Mode | None,
    inventory: Inventory,
    open_source: OpenSource = default_open_source,
    probe_seconds: float = 1.0,
    min_frames: int = 5,
    fps_tolerance: float = 0.9,
    open_samples: OpenSamples | None = None,
) -> Verification:
    """Inventory match, firmware, mode, then a probe of ``probe_seconds`` of real frames (a
    camera's) or samples (an instrument's, opened by ``open_samples``)."""
    entry = inventory.match(device)
    if entry is None:
        return refuse(
            device,
            None,
            requested_mode,
            Refusal.UNKNOWN_MODEL,
            f"{who(device)} is not in Labrig's compatibility inventory, so its modes and firmware "
            "are unknown. Connect a listed model, or ask your Labrig administrator to add this one "
            "(docs/inventory.md).",
        )
    if requested_mode is not None and requested_mode.pixel_format == ANY_FORMAT:
        requested_mode = entry.resolve(requested_mode) or requested_mode
    if not entry.firmware_ok(device.firmware):
        found = f"firmware {device.firmware}" if device.firmware else "firmware that cannot be read"
        return refuse(
            device,
            entry.id,
            requested_mode,
            Refusal.FIRMWARE_TOO_OLD,
            f"{who(device)} has {found}; Labrig needs {entry.min_firmware} or newer. Update it "
            "with the manufacturer's tool, reconnect it and verify again.",
        )
    if entry.modes and (requested_mode is None or not entry.allows(requested_mode)):
        asked = requested_mode.label() if requested_mode else "no mode"
        return refuse(
            device,
            entry.id,
            requested_mode,
            Refusal.MODE_UNSUPPORTED,
            f"{who(device)} is not verified for {asked}. Choose one of: {entry.modes_label()}.",
        )
    if streams_samples(device, entry) and open_samples is not None:
        return probe_instrument(device, entry.id, open_samples, probe_seconds)
    if device.kind not in FRAME_KINDS or requested_mode is None:
        return _verify_presence(device, entry.id, requested_mode)
    return _probe(
        device, entry.id, requested_mode, open_source, probe_seconds, min_frames, fps_tolerance
    )


def _verify_presence(device: DeviceInfo, entry_id: str, mode: Mode | None) -> Verification:
    if device.kind == DeviceKind.WATCH_FOLDER:
        path = Path(device.address)
        if not path.is_dir():
            return refuse(
                device,
                entry_id,
                mode,
                Refusal.OPEN_FAILED,
                f"the watch folder {path} does not exist (or is not mounted). Create it or correct "
                "the path in the settings, then verify again.",
            )
        if not os.access(path, os.W_OK | os.X_OK):
            return refuse(
                device,
                entry_id,
                mode,
                Refusal.OPEN_FAILED,
                f"Labrig cannot write to the watch folder {path}. Give the Labrig user write "
                "access to it, then verify again.",
            )
    return Verification(
        True,
        device,
        entry_id,
        mode,
        None,
        None,
        f"{who(device)} is listed in the inventory and present. It gives no picture stream, so "
        "it was verified by inventory match and presence only (no frames were read).",
    )


@dataclass
class _Frames:
    times: list[float]
    sizes: list[tuple[int, int]]
    ended_early: bool


def _probe(
    device: DeviceInfo,
    entry_id: str,
    mode: Mode,
    open_source: OpenSource,
    probe_seconds: float,
    min_frames: int,
    fps_tolerance: float,
) -> Verification:
    source: FrameSource | None = None
    try:
        source = open_source(device)
        source.open(mode)
    except (LabrigError, OSError, cv2.error) as exc:
        if source is not None:
            source.close()
        return _open_refused(device, entry_id, mode, exc)
    try:
        window = SETTLE_S + max(probe_seconds, (min_frames + 1) / mode.fps)
        frames = _grab(source, window, read_timeout=max(2.0, 3.0 / mode.fps))
    finally:
        source.close()
    return _judge(device, entry_id, mode, frames, window, min_frames, fps_tolerance)


def _open_refused(device: DeviceInfo, entry_id: str, mode: Mode, exc: Exception) -> Verification:
    if isinstance(exc, LabrigError):
        code = (
            Refusal.MODE_UNSUPPORTED
            if exc.code == Refusal.MODE_UNSUPPORTED
            else Refusal.OPEN_FAILED
        )
        return refuse(
            device,
            entry_id,
            mode,
            code,
            f"Labrig could not open {who(device)}: {redact(device, exc.message)}",
        )
    return refuse(
        device,
        entry_id,
        mode,
        Refusal.OPEN_FAILED,
        f"Labrig could not open {who(device)} ({redact(device, str(exc))}). Check the cable or "
        "network and that no other program is using it, then verify again.",
    )


def _grab(source: FrameSource, window: float, read_timeout: float) -> _Frames:
    """Read until ``window`` seconds after the first frame (the time to open the device
    does not count). Each frame's time is the device's own stamp of it where the device gives
    one (so a busy host does not make a camera look slow), else when it arrived."""
    got = _Frames([], [], ended_early=False)
    deadline: float | None = None
    while deadline is None or got.times[-1] < deadline:
        frame, timed = read_timed(source, read_timeout)
        now = timed.mono_ns / 1e9 if timed is not None else time.monotonic()
        if frame is None:
            got.ended_early = True
            break
        got.times.append(now)
        got.sizes.append((int(frame.shape[1]), int(frame.shape[0])))
        deadline = deadline if deadline is not None else now + window
    return got


def _judge(
    device: DeviceInfo,
    entry_id: str,
    mode: Mode,
    got: _Frames,
    window: float,
    min_frames: int,
    fps_tolerance: float,
) -> Verification:
    n = len(got.times)
    settled = [t for t in got.times if t >= got.times[0] + SETTLE_S] if n else []
    span = settled[-1] - settled[0] if len(settled) > 1 else 0.0
    fps = (len(settled) - 1) / span if span > 0 else 0.0
    width, height = max(set(got.sizes), key=got.sizes.count) if got.sizes else (0, 0)
    measured = MeasuredMode(width, height, fps, n) if n else None
    if n == 0:
        return refuse(
            device,
            entry_id,
            mode,
            Refusal.NO_FRAMES,
            measured=measured,
            reason=(
                f"{who(device)} opened but sent no picture. Check the cable or network and the "
                "camera's power, close other programs that use it, then verify again."
            ),
        )
    if any(size != (mode.width, mode.height) for size in got.sizes):
        return refuse(
            device,
            entry_id,
            mode,
            Refusal.FRAME_SIZE_MISMATCH,
            measured=measured,
            reason=(
                f"{who(device)} sends {width}×{height} pictures although "
                f"{mode.width}×{mode.height} was asked. Set the camera to that size (an IP camera "
                "in its own web page) or choose the mode it delivers."
            ),
        )
    if got.ended_early:
        return refuse(
            device,
            entry_id,
            mode,
            Refusal.NO_FRAMES,
            measured=measured,
            reason=(
                f"{who(device)} sent {n} picture(s) and then stopped within a {window:.1f} s "
                "test. Check the cable or network and the camera's power, then verify again."
            ),
        )
    if fps < fps_tolerance * mode.fps:
        return refuse(
            device,
            entry_id,
            mode,
            Refusal.FPS_TOO_LOW,
            measured=measured,
            reason=(
                f"{who(device)} delivered {fps:.1f} pictures per second instead of {mode.fps:g}. "
                "Add light or turn off auto-exposure (webcams slow down in dim light), give it a "
                "USB port or network of its own, or choose a lower frame rate."
            ),
        )
    if len(settled) < min_frames:
        return refuse(
            device,
            entry_id,
            mode,
            Refusal.NO_FRAMES,
            measured=measured,
            reason=(
                f"{who(device)} sent only {len(settled)} picture(s) to measure, {min_frames} are "
                "needed. Verify again with a longer test."
            ),
        )
    return Verification(
        True,
        device,
        entry_id,
        mode,
        measured,
        None,
        f"{who(device)} verified: {width}×{height} at {fps:.1f} fps measured over "
        f"{len(settled)} pictures.",
    )
