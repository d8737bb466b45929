"""A recording's state as others see it, and where it lives: the states, the status snapshot, the
provisional folder, and the lock that keeps two recordings off one device."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from labrig.errors import LabrigError
from labrig.fsutil import FileLock
from labrig.store import Store

HELD = 2**63  # a held recorder's start instant until begin() names one: after every frame


class RecorderState(StrEnum):
    IDLE = "idle"
    RECORDING = "recording"
    STOPPING = "stopping"
    COMMITTED = "committed"
    FAILED = "failed"


@dataclass(frozen=True)
class RecorderStatus:
    state: RecorderState
    capture_id: str
    frames: int  # frames (an instrument's: samples) written so far
    dropped: int  # gap drops + queue-overflow drops
    elapsed_s: float
    fps: float  # frames written per second since the start
    mb_per_s: float  # bytes on disk per second since the start (closed segments + the open one)
    segments: int  # closed segments
    stop_reason: str = ""  # why recording ended, when it was not asked to


def provisional_root(store: Store) -> Path:
    return store.root / "captures" / "provisional"


class DeviceBusyError(LabrigError):
    """The device is being recorded already (by a rig, the window or another command)."""

    code = "LABRIG_DEVICE_BUSY"


def device_lock(store: Store, device_id: str) -> FileLock:
    """The lock a recording of ``device_id`` holds in the data folder, so that no two recordings
    (in this process or another) share a device."""
    folder = store.root / "captures" / "devices"
    folder.mkdir(parents=True, exist_ok=True)
    return FileLock(folder / f"{hashlib.sha256(device_id.encode()).hexdigest()[:24]}.lock")


def status_json(status: RecorderStatus) -> dict[str, Any]:
    data = asdict(status)
    data["state"] = status.state.value
    return data
