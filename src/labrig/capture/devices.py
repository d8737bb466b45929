"""Devices: the capture sources Labrig can find, described the same way whatever their kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class DeviceKind(StrEnum):
    UVC = "uvc"  # USB/UVC camera opened through OpenCV
    IP = "ip"  # IP camera by URL (MJPEG over HTTP, RTSP)
    USB_INSTRUMENT = "usb_instrument"  # USB instrument through pyusb
    WATCH_FOLDER = "watch_folder"  # a folder another program drops media files into
    VIRTUAL = "virtual"  # the built-in synthetic camera


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
        return {"device_id": self.device_id, "kind": self.kind.value, "name": self.name, "address": self.address,
                "vid_pid": self.vid_pid, "serial": self.serial, "firmware": self.firmware,
                "descriptors": self.descriptors}
