"""A USB stack for tests: pyusb's own backend interface (``usb.backend.IBackend``) over devices held
in memory, so ``usb.core.find``, ``usb.util.get_string`` and the rest of pyusb run for real above
it. Enumeration and string descriptors (control transfers on EP0) here; an instrument that streams
samples over a bulk endpoint in :mod:`tests.support.usb_instrument`."""

from __future__ import annotations

import array
import errno
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import usb.backend
import usb.core

_GET_DESCRIPTOR, _STRING = 0x06, 0x03
_EN_US = 0x0409


@dataclass
class FakeUsbDevice:
    """One device as the USB stack sees it; ``denied``: opening it needs rights we
    lack (no udev rule)."""

    vendor_id: int
    product_id: int
    bcd_device: int
    manufacturer: str | None = None
    product: str | None = None
    serial: str | None = None
    bus: int = 1
    address: int = 4
    ports: tuple[int, ...] = (2,)
    device_class: int = 0x00
    denied: bool = False

    def strings(self) -> dict[int, str]:
        return {
            i: s for i, s in enumerate((self.manufacturer, self.product, self.serial), start=1) if s
        }


class FakeUsbBackend(usb.backend.IBackend):  # type: ignore[misc]
    """Just enough of a libusb backend for enumeration and string descriptors (control
    transfers on EP0)."""

    def __init__(self, devices: Iterable[FakeUsbDevice], *, fail_enumeration: bool = False) -> None:
        super().__init__()
        self.devices, self.fail_enumeration = list(devices), fail_enumeration
        self.open_handles = 0

    def enumerate_devices(self) -> Iterator[FakeUsbDevice]:
        if self.fail_enumeration:
            raise usb.core.USBError("Input/Output Error", -1, errno.EIO)
        return iter(self.devices)

    def get_device_descriptor(self, dev: FakeUsbDevice) -> Any:
        strings = dev.strings()
        return SimpleNamespace(
            bLength=18,
            bDescriptorType=1,
            bcdUSB=0x0200,
            bDeviceClass=dev.device_class,
            bDeviceSubClass=0,
            bDeviceProtocol=0,
            bMaxPacketSize0=64,
            idVendor=dev.vendor_id,
            idProduct=dev.product_id,
            bcdDevice=dev.bcd_device,
            iManufacturer=1 if 1 in strings else 0,
            iProduct=2 if 2 in strings else 0,
            iSerialNumber=3 if 3 in strings else 0,
            bNumConfigurations=1,
            address=dev.address,
            bus=dev.bus,
            port_number=dev.ports[-1],
            port_numbers=dev.ports,
            speed=3,
        )

    def open_device(self, dev: FakeUsbDevice) -> FakeUsbDevice:
        if dev.denied:  # what libusb1 raises on Linux without a udev rule
            raise usb.core.USBError("Access denied (insufficient permissions)", -3, errno.EACCES)
        self.open_handles += 1
        return dev

    def close_device(self, dev_handle: FakeUsbDevice) -> None:
        self.open_handles -= 1

    def ctrl_transfer(
        self,
        dev_handle: FakeUsbDevice,
        bmRequestType: int,
        bRequest: int,
        wValue: int,
        wIndex: int,
        data: array.array[int],
        timeout: int,
    ) -> int:
        if bmRequestType != 0x80 or bRequest != _GET_DESCRIPTOR or wValue >> 8 != _STRING:
            raise usb.core.USBError("Pipe error", -9, errno.EPIPE)
        index = wValue & 0xFF
        if index == 0:
            payload = struct.pack("<H", _EN_US)
        elif wIndex != _EN_US or index not in dev_handle.strings():
            raise usb.core.USBError("Pipe error", -9, errno.EPIPE)
        else:
            payload = dev_handle.strings()[index].encode("utf-16-le")
        desc = bytes([2 + len(payload), _STRING]) + payload
        n = min(len(desc), len(data))
        data[:n] = array.array("B", desc[:n])
        return n
