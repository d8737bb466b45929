"""Discovery: every device Labrig could capture from, whatever its kind.

Each kind is looked for on its own; a kind that fails (no libusb, a camera API
error, a missing folder) becomes a :class:`DiscoveryProblem` and never hides the
other kinds. Discovery only lists: it opens no camera and contacts no IP camera
(verification does that). Reading USB descriptor strings opens the device, which
may need permissions the technician lacks: such a device is still listed, with
its strings recorded as unreadable.

Threading: blocking (camera enumeration, USB control transfers); call it from a
worker thread, never from the GUI thread.
"""

from __future__ import annotations

import errno
import logging
import os
import platform
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import cv2
import libusb_package
import usb.core
import usb.util
from cv2_enumerate_cameras import enumerate_cameras

from labrig.capture.devices import DeviceInfo, DeviceKind, redact_url
from labrig.capture.rig_camera import rig_devices
from labrig.capture.virtual import MARKERS_DEVICE_ID, VIRTUAL_ADDRESS, VIRTUAL_CAMERA_NAME
from labrig.capture.virtual_instrument import plate_device

log = logging.getLogger(__name__)

IP_SCHEMES = frozenset({"http", "https", "rtsp"})
_USB_CLASS_HUB = 0x09
_PERMISSION_ERRNOS = frozenset({errno.EACCES, errno.EPERM})
UNREADABLE_PERMISSION = "unreadable (permission)"


@dataclass(frozen=True)
class DiscoverySettings:
    """What to look for besides what is plugged in."""

    ip_cameras: list[str] = field(default_factory=list)  # stream URLs; may carry credentials
    # folders another program writes into
    watch_folders: list[Path | str] = field(default_factory=list)
    camera_api: int | None = None  # OpenCV backend used to list cameras; None: this OS's default


@dataclass(frozen=True)
class DiscoveryProblem:
    """Something a technician should know about one kind of device (never contains a password)."""

    kind: DeviceKind
    code: str
    message: str


class DiscoveryReport(list[DeviceInfo]):
    """The devices found (this object is the list) plus the ``problems`` met while looking."""

    def __init__(
        self, devices: Iterable[DeviceInfo] = (), problems: Iterable[DiscoveryProblem] = ()
    ) -> None:
        super().__init__(devices)
        self.problems: list[DiscoveryProblem] = list(problems)

    @property
    def devices(self) -> list[DeviceInfo]:
        return list(self)

    def problems_for(self, kind: DeviceKind) -> list[DiscoveryProblem]:
        return [p for p in self.problems if p.kind == kind]


def discover(settings: DiscoverySettings | None = None, usb_backend: Any = None) -> DiscoveryReport:
    """All devices of every kind. ``usb_backend``: a pyusb backend; None uses
    libusb-package's libusb1."""
    settings = settings or DiscoverySettings()
    report = DiscoveryReport()
    _collect(report, DeviceKind.UVC, lambda: (discover_uvc(settings.camera_api), []))
    _collect(report, DeviceKind.IP, lambda: discover_ip(settings.ip_cameras))
    camera_ids = {d.vid_pid for d in report if d.kind == DeviceKind.UVC and d.vid_pid}
    _collect(
        report,
        DeviceKind.USB_INSTRUMENT,
        lambda: discover_usb(usb_backend, skip_vid_pids=camera_ids),
    )
    _collect(
        report, DeviceKind.WATCH_FOLDER, lambda: discover_watch_folders(settings.watch_folders)
    )
    report.extend(discover_virtual())
    for problem in report.problems:
        log.warning("discovery: %s: %s", problem.code, problem.message)
    return report


_Step = Callable[[], tuple[list[DeviceInfo], list[DiscoveryProblem]]]


def _collect(report: DiscoveryReport, kind: DeviceKind, step: _Step) -> None:
    try:
        devices, problems = step()
    except Exception as exc:  # one kind failing, for any reason, must not hide the others
        log.exception("discovery of %s devices failed", kind.value)
        report.problems.append(
            DiscoveryProblem(
                kind,
                "LABRIG_DISCOVERY_FAILED",
                f"could not list {kind.value} devices ({type(exc).__name__}: {exc}); the other "
                "kinds are still listed. Reconnect the device or restart the workstation, then "
                "search again",
            )
        )
        return
    report.extend(devices)
    report.problems.extend(problems)


# --- USB/UVC cameras
# -------------------------------------------------------------------------------


def default_camera_api() -> int:
    """The OpenCV capture backend this OS lists and opens cameras with."""
    apis = {"Linux": cv2.CAP_V4L2, "Windows": cv2.CAP_MSMF, "Darwin": cv2.CAP_AVFOUNDATION}
    return int(apis.get(platform.system(), cv2.CAP_ANY))


def discover_uvc(api: int | None = None) -> list[DeviceInfo]:
    """Cameras OpenCV can open; ``address`` is the index to pass to
    ``cv2.VideoCapture(index, api)``."""
    api = default_camera_api() if api is None else api
    devices = []
    for cam in enumerate_cameras(api):
        vid_pid = (
            f"{cam.vid:04x}:{cam.pid:04x}"
            if cam.vid is not None and cam.pid is not None
            else "unknown"
        )
        devices.append(
            DeviceInfo(
                device_id=f"uvc:{vid_pid}:{cam.name}:{cam.path}",
                kind=DeviceKind.UVC,
                name=str(cam.name),
                address=str(cam.index),
                vendor_id=cam.vid,
                product_id=cam.pid,
                descriptors={"path": str(cam.path), "api": int(api)},
            )
        )
    return devices


# --- IP cameras
# ------------------------------------------------------------------------------------


def discover_ip(urls: Iterable[str]) -> tuple[list[DeviceInfo], list[DiscoveryProblem]]:
    """One device per configured URL (not contacted here). ``address`` keeps the
    credentials to open it."""
    devices, problems = [], []
    for url in urls:
        safe = redact_url(url.strip())
        parts = urlsplit(url.strip())
        if parts.scheme.lower() not in IP_SCHEMES or not parts.hostname:
            problems.append(
                DiscoveryProblem(
                    DeviceKind.IP,
                    "LABRIG_IP_URL_INVALID",
                    f"the IP camera address {safe!r} is not an http://, https:// or rtsp:// URL "
                    "with a host; correct it in the settings",
                )
            )
            continue
        devices.append(
            DeviceInfo(
                device_id=f"ip:{safe}",
                kind=DeviceKind.IP,
                name=f"IP camera {parts.hostname}{parts.path}",
                address=url.strip(),
                descriptors={"url": safe, "scheme": parts.scheme.lower()},
            )
        )
    return devices, problems


# --- USB instruments
# -------------------------------------------------------------------------------


def bcd_version(bcd: int) -> str:
    """USB ``bcdDevice`` (JJ.M.N in binary-coded decimal) as a dotted version:
    0x0120 → ``"1.2.0"``."""
    major = ((bcd >> 12) & 0xF) * 10 + ((bcd >> 8) & 0xF)
    return f"{major}.{(bcd >> 4) & 0xF}.{bcd & 0xF}"


def discover_usb(
    backend: Any = None, *, skip_vid_pids: Iterable[str] = ()
) -> tuple[list[DeviceInfo], list[DiscoveryProblem]]:
    """USB devices other than hubs (and other than ``skip_vid_pids``, the cameras already found)."""
    backend = backend if backend is not None else libusb_package.get_libusb1_backend()
    if backend is None:
        return [], [
            DiscoveryProblem(
                DeviceKind.USB_INSTRUMENT,
                "LABRIG_USB_BACKEND_MISSING",
                "no libusb library was found, so USB instruments cannot be listed; "
                "reinstall Labrig",
            )
        ]
    skip = set(skip_vid_pids)
    devices, problems = [], []
    for dev in usb.core.find(find_all=True, backend=backend):
        if dev.bDeviceClass == _USB_CLASS_HUB or f"{dev.idVendor:04x}:{dev.idProduct:04x}" in skip:
            continue
        info = _usb_device(dev)
        devices.append(info)
        unreadable = sorted(
            {str(v) for v in info.descriptors.values() if str(v).startswith("unreadable")}
        )
        if unreadable:
            problems.append(
                DiscoveryProblem(
                    DeviceKind.USB_INSTRUMENT,
                    "LABRIG_USB_STRINGS_UNREADABLE",
                    f"USB device {info.vid_pid} at {info.address}: name and serial are "
                    f"{', '.join(unreadable)}. It is listed by VID:PID only. On Linux install the "
                    "udev rule that grants the lab group access; on Windows bind the WinUSB "
                    "driver to it",
                )
            )
    return devices, problems


def _usb_device(dev: Any) -> DeviceInfo:
    strings = _read_strings(dev)
    readable = {k: v for k, v in strings.items() if not v.startswith("unreadable")}
    vid_pid = f"{dev.idVendor:04x}:{dev.idProduct:04x}"
    ports = getattr(dev, "port_numbers", None)
    location = f"{dev.bus}-{'.'.join(map(str, ports))}" if ports else f"{dev.bus}:{dev.address}"
    serial = readable.get("serial") or None
    return DeviceInfo(
        device_id=f"usb:{vid_pid}:{serial}" if serial else f"usb:{vid_pid}@{location}",
        kind=DeviceKind.USB_INSTRUMENT,
        name=readable.get("product") or f"USB device {vid_pid}",
        address=f"{dev.bus}:{dev.address}",
        vendor_id=int(dev.idVendor),
        product_id=int(dev.idProduct),
        serial=serial,
        firmware=bcd_version(int(dev.bcdDevice)),
        descriptors={**strings, "bcdDevice": f"0x{dev.bcdDevice:04x}", "location": location},
    )


def _read_strings(dev: Any) -> dict[str, str]:
    """Manufacturer, product and serial: each its text or ``unreadable (why)``. Opens the
    device, then closes it."""
    wanted = {
        k: i
        for k, i in (
            ("manufacturer", dev.iManufacturer),
            ("product", dev.iProduct),
            ("serial", dev.iSerialNumber),
        )
        if i
    }
    out: dict[str, str] = {}
    try:
        langids = usb.util.get_langids(dev)
        # no languages: the device has no strings
        for key, index in wanted.items() if langids else ():
            try:
                out[key] = usb.util.get_string(dev, index, langids[0])
            except (usb.core.USBError, NotImplementedError, ValueError) as exc:
                out[key] = _unreadable(exc)
    except (usb.core.USBError, NotImplementedError) as exc:  # could not even open it
        out = {key: _unreadable(exc) for key in wanted}
    finally:
        usb.util.dispose_resources(dev)
    return out


def _unreadable(exc: Exception) -> str:
    code = getattr(exc, "errno", None)
    if code in _PERMISSION_ERRNOS:
        return UNREADABLE_PERMISSION
    return f"unreadable ({getattr(exc, 'strerror', None) or type(exc).__name__})"


# --- Watch folders and the virtual camera
# ----------------------------------------------------------


def discover_watch_folders(
    folders: Iterable[Path | str],
) -> tuple[list[DeviceInfo], list[DiscoveryProblem]]:
    """Every configured folder, with whether it exists and is writable; missing ones
    are also problems."""
    devices, problems = [], []
    for folder in folders:
        path = Path(folder).expanduser().absolute()
        exists = path.is_dir()
        writable = exists and os.access(path, os.W_OK | os.X_OK)
        devices.append(
            DeviceInfo(
                device_id=f"folder:{path}",
                kind=DeviceKind.WATCH_FOLDER,
                name=path.name or str(path),
                address=str(path),
                descriptors={"exists": exists, "writable": writable},
            )
        )
        if not exists:
            what = "is a file, not a folder" if path.exists() else "does not exist"
            problems.append(
                DiscoveryProblem(
                    DeviceKind.WATCH_FOLDER,
                    "LABRIG_WATCH_FOLDER_MISSING",
                    f"the watch folder {path} {what}; create it or correct the path in the "
                    "settings (a network share must be mounted first)",
                )
            )
        elif not writable:
            problems.append(
                DiscoveryProblem(
                    DeviceKind.WATCH_FOLDER,
                    "LABRIG_WATCH_FOLDER_UNWRITABLE",
                    f"Labrig cannot write to the watch folder {path}, so it cannot move ingested "
                    "files out; give the Labrig user write access to it",
                )
            )
    return devices, problems


def discover_virtual() -> list[DeviceInfo]:
    """The built-in synthetic camera, then the virtual rig's twelve cameras and its force plate;
    always present. The
    camera's scene (markers, or the calibration board) is switched while it runs:
    :class:`~labrig.capture.virtual.SceneSwitch`."""
    return [
        DeviceInfo(
            device_id=MARKERS_DEVICE_ID,
            kind=DeviceKind.VIRTUAL,
            name=VIRTUAL_CAMERA_NAME,
            address=VIRTUAL_ADDRESS,
            descriptors={"scenes": "markers, board, plane"},
        ),
        *rig_devices(),
        plate_device(),
    ]
