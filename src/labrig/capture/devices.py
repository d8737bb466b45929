"""Devices: the capture sources Labrig can find, described the same way whatever their kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_SECRET_QUERY_KEYS = frozenset(
    {"password", "pass", "passwd", "pwd", "token", "key", "apikey", "auth"}
)


class DeviceKind(StrEnum):
    UVC = "uvc"  # USB/UVC camera opened through OpenCV
    IP = "ip"  # IP camera by URL (MJPEG over HTTP, RTSP)
    USB_INSTRUMENT = "usb_instrument"  # USB instrument through pyusb
    WATCH_FOLDER = "watch_folder"  # a folder another program drops media files into
    VIRTUAL = "virtual"  # the built-in synthetic camera
    VIRTUAL_INSTRUMENT = "virtual_instrument"  # the virtual rig's force plate


@dataclass(frozen=True)
class DeviceInfo:
    """One device as discovery found it. ``device_id`` is stable across restarts and re-plugging."""

    device_id: str
    kind: DeviceKind
    name: str
    address: str  # OpenCV index, URL, bus:address, folder path or virtual scene name
    vendor_id: int | None = None
    product_id: int | None = None
    serial: str | None = None
    firmware: str | None = None
    descriptors: dict[str, Any] = field(default_factory=dict)

    @property
    def vid_pid(self) -> str | None:
        if self.vendor_id is None or self.product_id is None:
            return None
        return f"{self.vendor_id:04x}:{self.product_id:04x}"

    def to_json(self) -> dict[str, Any]:
        """Safe to store, show and log: an IP camera's credentials are redacted."""
        address = redact_url(self.address) if self.kind is DeviceKind.IP else self.address
        return {
            "device_id": self.device_id,
            "kind": self.kind.value,
            "name": self.name,
            "address": address,
            "vid_pid": self.vid_pid,
            "serial": self.serial,
            "firmware": self.firmware,
            "descriptors": self.descriptors,
        }


def redact_url(url: str) -> str:
    """``url`` without user name, password or secret query values: safe to show and log."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = urlencode(
        [
            (k, "***" if k.lower() in _SECRET_QUERY_KEYS else v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
        ],
        safe="*",
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
