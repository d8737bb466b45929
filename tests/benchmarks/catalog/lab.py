"""The lab the catalog is made of: its subjects, protocols, people, workstations, rigs and
devices; the units of time, and the ids and stored times the rows use."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

DEFAULT_ATTEMPTS = 100_000
QUICK_ATTEMPTS = 10_000
CHUNK_ATTEMPTS = 10_000  # attempts per transaction
ATTEMPTS_PER_SESSION = 10
EVENTS_PER_ATTEMPT = 30
SPAN_DAYS = 3 * 365
S = 1_000_000  # µs per second: every time here is an int of µs since the epoch (UTC)
MINUTE, HOUR, DAY = 60 * S, 3600 * S, 86400 * S
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
NAIVE_EPOCH = datetime(1970, 1, 1)


def words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


PROTOCOLS = words(
    "gait-overground gait-treadmill gait-dual-task gait-stairs-up gait-stairs-down gait-turn-180 "
    "sit-to-stand timed-up-and-go balance-quiet balance-perturbed jump-countermovement "
    "hop-single-leg reach-left reach-right reach-bimanual grasp-cylinder grasp-pinch "
    "pointing-targets drinking-task hand-to-mouth"
)
OPERATORS = words(
    "akowalski bnguyen cmartin dschmidt eoconnor fgarcia grossi hyamamoto ilarsen jdubois kpatel "
    "lmuller mrossi nsilva oberg"
)
REVIEWERS = ("kpatel", "dschmidt", "hyamamoto", "mrossi")
HOSTS = ("lab-ws-01", "lab-ws-02", "lab-ws-03", "lab-ws-04")
SUBJECTS = 300
DESTINATIONS = ("lab-archive", "offsite-nas", "usb-backup")
PLACES = ("front", "left", "right")
#: the calibrated rig's 3-D pipeline (labrig.pipeline.rig_pipeline), each step's config, and how
#: long each stage runs (s, low and high)
PIPELINE: dict[str, tuple[dict[str, Any], float, float]] = {
    "rig.sync": ({}, 1.0, 4.0),
    "media.qc": ({"every_camera": True}, 8.0, 40.0),
    "tracking.rig": ({"rig_calibration_id": None}, 30.0, 150.0),
    "reconstruction.3d": ({"offsets_ms": None}, 4.0, 25.0),
    "kinematics.3d": ({}, 0.5, 3.0),
}
STAGES = tuple(PIPELINE)
#: finished attempts: (outcome, cumulative probability); the newest are pending instead
OUTCOMES = (("published", 0.80), ("degraded", 0.92), ("blocked", 0.985), ("failed", 1.0))
#: where in the pipeline (stage weights) a degraded, blocked or failed attempt is stopped
AT_STAGE = {"degraded": (35, 35, 0, 30, 0), "blocked": (15, 20, 35, 30, 0)}
INTERRUPTED = "Interrupted: the window was closed while recording."
MEDIA_BYTES = b"Labrig benchmark catalog: one tiny stand-in media file shared by every segment.\n"
STAMPS_BYTES = b"frame,device_index,device_ns,mono_ns\n0,0,0,0\n"
SEGMENT_NAME = "seg-00000.avi"


# -- the lab: devices and rigs ---------------------------------------------------------------------


@dataclass(frozen=True)
class Device:
    device_id: str
    kind: str  # uvc, ip or virtual
    name: str
    address: str
    inventory_entry: str
    vid_pid: str | None
    width: int
    height: int
    fps: float
    pixel_format: str

    def mode(self) -> dict[str, Any]:
        """As Mode.to_json stores it."""
        return {
            "width": self.width,
            "height": self.height,
            "fps": self.fps,
            "pixel_format": self.pixel_format,
        }

    def label(self) -> str:
        return f"{self.width}x{self.height}@{self.fps:g} {self.pixel_format}"

    def info(self) -> dict[str, Any]:
        """As DeviceInfo.to_json stores it."""
        return {
            "device_id": self.device_id,
            "kind": self.kind,
            "name": self.name,
            "address": self.address,
            "vid_pid": self.vid_pid,
            "serial": None,
            "firmware": None,
            "descriptors": {},
        }

    def verification(self) -> dict[str, Any]:
        """As a passed verification's payload (capture.device.connected) stores it."""
        return {
            "device_id": self.device_id,
            "kind": self.kind,
            "inventory_entry": self.inventory_entry,
            "mode": self.mode(),
            "measured_fps": round(self.fps - 0.03, 3),
        }


@dataclass(frozen=True)
class Rig:
    name: str
    devices: tuple[Device, ...]  # one per place of PLACES
    created_by: str


def _uvc(vid_pid: str, model: str, entry: str, video: int) -> Device:
    path = f"/dev/video{video}"
    return Device(
        f"uvc:{vid_pid}:{model}:{path}", "uvc", model, path, entry, vid_pid, 1280, 720, 30.0, "MJPG"
    )


def _ip(host: int) -> Device:
    url = f"http://10.20.0.{host}/mjpg/video.mjpg"
    return Device(
        f"ip:{url}",
        "ip",
        f"MJPEG camera 10.20.0.{host}",
        url,
        "ip-mjpeg-http",
        None,
        640,
        480,
        25.0,
        "MJPG",
    )


def _virtual(index: int) -> Device:
    return Device(
        f"virtual:rig-{index}",
        "virtual",
        f"Labrig virtual rig camera {index}",
        f"rig-{index}",
        "labrig-virtual-rig-camera",
        None,
        1280,
        720,
        30.0,
        "BGR",
    )


RIGS = {
    r.name: r
    for r in (
        Rig(
            "walkway",
            tuple(_uvc("046d:082d", "HD Pro Webcam C920", "logitech-c920", v) for v in (0, 2, 4)),
            "akowalski",
        ),
        Rig("treadmill", tuple(_ip(h) for h in (31, 32, 33)), "cmartin"),
        Rig(
            "reach-bench",
            tuple(
                _uvc("046d:085c", "C922 Pro Stream Webcam", "logitech-c922", v) for v in (1, 3, 5)
            ),
            "hyamamoto",
        ),
        Rig("sim-bench", tuple(_virtual(i) for i in (1, 2, 3)), "kpatel"),
    )
}


def rig_for(protocol: str, rng: random.Random) -> Rig:
    """Where a protocol is recorded (a few sessions of each on the virtual bench, as checks)."""
    if rng.random() < 0.04:
        return RIGS["sim-bench"]
    if protocol == "gait-treadmill":
        return RIGS["treadmill"]
    if protocol.startswith(("reach", "grasp", "pointing", "drinking", "hand")):
        return RIGS["reach-bench"]
    return RIGS["walkway"]


# -- small helpers ---------------------------------------------------------------------------------


def uuid4_text(rng: random.Random) -> str:
    value = rng.getrandbits(128) & ~(0xF << 76 | 0x3 << 62) | 0x4 << 76 | 0b10 << 62
    d = f"{value:032x}"
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:]}"


def uuid7_text(rng: random.Random, us: int) -> str:
    """A version-7 UUID made at ``us`` (as labrig.domain.ids.time_ordered_id makes one)."""
    bits = rng.getrandbits(80)
    value = (us // 1000) << 80 | 0x7 << 76 | (bits >> 68) << 64 | 0b10 << 62 | bits & (1 << 62) - 1
    d = f"{value:032x}"
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:]}"


def hex64(rng: random.Random) -> str:
    return f"{rng.getrandbits(256):064x}"


def sqlite_time(us: int) -> str:
    """``us`` as the app stores a time on SQLite (sqlite.to_db_datetime: naive UTC text)."""
    return (NAIVE_EPOCH + timedelta(microseconds=us)).isoformat(sep=" ", timespec="microseconds")


def pg_time(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)


def iso(us: int) -> str:
    return pg_time(us).isoformat(timespec="microseconds")


def to_us(when: datetime) -> int:
    return (when - EPOCH) // timedelta(microseconds=1)
