"""A device's verdict: passed or refused, with a stable code and what the technician does.

Shared by the cameras' probe (:mod:`labrig.capture.verify`) and the instruments'
(:mod:`labrig.capture.verify_instrument`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from labrig.capture.devices import DeviceInfo, DeviceKind, redact_url
from labrig.capture.samples import SampleMode
from labrig.capture.sources import Mode
from labrig.errors import LabrigError


class Refusal(StrEnum):
    """Stable refusal codes; scripts and the UI match on them (docs/inventory.md says what
    to do for each)."""

    UNKNOWN_MODEL = "LABRIG_DEVICE_UNKNOWN_MODEL"
    FIRMWARE_TOO_OLD = "LABRIG_FIRMWARE_TOO_OLD"
    MODE_UNSUPPORTED = "LABRIG_MODE_UNSUPPORTED"
    OPEN_FAILED = "LABRIG_DEVICE_OPEN_FAILED"
    NO_FRAMES = "LABRIG_NO_FRAMES"
    FRAME_SIZE_MISMATCH = "LABRIG_FRAME_SIZE_MISMATCH"
    FPS_TOO_LOW = "LABRIG_FPS_TOO_LOW"
    INSTRUMENT_PROTOCOL = "LABRIG_INSTRUMENT_PROTOCOL"


class DeviceRefusedError(LabrigError):
    """Raised when a refused verification is used as if it had passed; ``code`` is the refusal's."""

    code = "LABRIG_DEVICE_REFUSED"


@dataclass(frozen=True)
class MeasuredMode:
    """What the probe saw: frame size, frame rate from arrival times, and how many
    frames it counted."""

    width: int
    height: int
    fps: float
    frames: int


@dataclass(frozen=True)
class Verification:
    """The verdict on one device in one mode. ``reason_code`` is None exactly when ``ok``."""

    ok: bool
    device: DeviceInfo
    entry_id: str | None
    requested: Mode | None
    measured: MeasuredMode | None
    reason_code: str | None
    reason: str
    stream: SampleMode | None = None  # an instrument's: its rate, channels and units

    def to_event_payload(self) -> dict[str, Any]:
        """The ``capture.device.connected`` payload.
        Frameless devices report a zero mode and 0 fps."""
        if not self.ok or self.entry_id is None:
            raise DeviceRefusedError(self.reason, code=self.reason_code)
        mode: dict[str, Any] = (
            self.requested.to_json()
            if self.requested
            else {"width": 0, "height": 0, "fps": 0.0, "pixel_format": "none"}
        )
        if self.stream is not None:
            mode = {
                "width": 0,
                "height": 0,
                "fps": self.stream.rate_hz,
                "pixel_format": "samples",
                "channels": self.stream.to_json()["channels"],
            }
        return {
            "device_id": self.device.device_id,
            "kind": self.device.kind.value,
            "inventory_entry": self.entry_id,
            "mode": mode,
            "measured_fps": round(self.measured.fps, 2) if self.measured else 0.0,
        }


def refuse(
    device: DeviceInfo,
    entry_id: str | None,
    mode: Mode | None,
    code: Refusal,
    reason: str,
    measured: MeasuredMode | None = None,
) -> Verification:
    return Verification(False, device, entry_id, mode, measured, code.value, reason)


def who(device: DeviceInfo) -> str:
    """The device's name, with what tells it apart from another of the same name (its USB ids,
    index or URL); the built-in virtual camera is one of a kind."""
    if device.kind == DeviceKind.VIRTUAL:
        return device.name
    ident = device.vid_pid or (
        redact_url(device.address) if device.kind == DeviceKind.IP else device.address
    )
    return f"{device.name} ({ident})"


def redact(device: DeviceInfo, text: str) -> str:
    """Messages from lower layers may quote the URL; credentials in it must never reach the
    screen or a log."""
    if device.kind == DeviceKind.IP and device.address:
        return text.replace(device.address, redact_url(device.address))
    return text
