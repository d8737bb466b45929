"""A USB instrument that speaks ``labrig-bulk/1``, behind pyusb's own backend interface.

:class:`ReferenceInstrument` is the device (its descriptors, its channels, what it streams: a known
signal, a pure function of the sample number, :func:`signal`); :class:`InstrumentBackend` is the
USB stack it is plugged into: configuration, interface and a bulk IN endpoint, the protocol's
vendor requests, and bulk transfers paced on the host's clock as the instrument's sample clock
ticks (with its drift). Labrig's driver and pyusb above it run unchanged: nothing of ours is
patched. Faults: ``unplug_after_s`` (the transfers fail with ENODEV, as a pulled cable does),
``corrupt_packet`` (that packet breaks the protocol), ``bad_info`` (GET_INFO answers garbage),
``late_every`` (some transfers arrive late, as on a busy bus).
"""

from __future__ import annotations

import array
import errno
import math
import struct
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
import usb.core

from tests.support.usb import FakeUsbBackend, FakeUsbDevice

CHANNELS = (("EMG1", "mV"), ("EMG2", "mV"), ("Trig", "V"))


def signal(first: int, count: int, channels: int = len(CHANNELS)) -> np.ndarray:
    """What the instrument measures at samples ``first`` …: count × channels float32."""
    n = np.arange(first, first + count, dtype=np.float64)[:, None]
    c = np.arange(channels, dtype=np.float64)[None, :]
    return (np.sin(2 * math.pi * n / 250.0 + c) * (c + 1)).astype(np.float32)


@dataclass(eq=False)
class ReferenceInstrument(FakeUsbDevice):
    vendor_id: int = 0x1209
    product_id: int = 0x0003
    bcd_device: int = 0x0100
    manufacturer: str | None = "Labrig reference"
    product: str | None = "Labrig reference instrument"
    serial: str | None = "LBR-0001"
    address: int = 9
    rate_hz: int = 2000
    per_packet: int = 40
    drift_ppm: float = 0.0
    unplug_after_s: float | None = None
    corrupt_packet: int | None = None
    bad_info: bool = False
    late_every: int = 0  # every n-th packet reaches the host 3 ms late (a busy bus)
    channels: tuple[tuple[str, str], ...] = CHANNELS
    # streaming state, set by START
    started_ns: int = 0
    next_packet: int = 0
    streaming: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def device_id(self) -> str:
        return f"usb:{self.vendor_id:04x}:{self.product_id:04x}:{self.serial}"

    def info(self) -> bytes:
        if self.bad_info:
            return b"HELLO WORLD, I AM NOT AN INSTRUMENT"
        head = struct.pack("<4sBBHI", b"LBI1", 1, len(self.channels), self.per_packet, self.rate_hz)
        return head + b"".join(
            struct.pack("<16s8s", name.encode(), unit.encode()) for name, unit in self.channels
        )

    def packet_due_ns(self, packet: int) -> int:
        """When packet ``packet``'s last sample is taken, on the host's clock."""
        last = (packet + 1) * self.per_packet - 1
        return self.started_ns + round(last * 1e9 / self.rate_hz * (1 + self.drift_ppm * 1e-6))

    def packet(self, packet: int) -> bytes:
        first = packet * self.per_packet
        if packet == self.corrupt_packet:
            return b"LBD1" + b"\x00" * 9
        head = struct.pack(
            "<4sIQHH", b"LBD1", first, round(first * 1e6 / self.rate_hz), self.per_packet, 0
        )
        return head + signal(first, self.per_packet, len(self.channels)).astype("<f4").tobytes()


class InstrumentBackend(FakeUsbBackend):
    """The USB stack of :class:`FakeUsbBackend` with what an instrument streaming on a bulk
    endpoint needs."""

    def __init__(self, devices: Iterable[FakeUsbDevice]) -> None:
        super().__init__(devices)
        self.claimed: set[int] = set()

    def get_configuration_descriptor(self, dev: FakeUsbDevice, config: int) -> Any:
        if config != 0:
            raise IndexError("one configuration")
        return SimpleNamespace(
            bLength=9,
            bDescriptorType=2,
            wTotalLength=32,
            bNumInterfaces=1,
            bConfigurationValue=1,
            iConfiguration=0,
            bmAttributes=0x80,
            bMaxPower=50,
            extra_descriptors=[],
        )

    def get_interface_descriptor(self, dev: FakeUsbDevice, intf: int, alt: int, config: int) -> Any:
        if intf != 0 or alt != 0:
            raise IndexError("one interface, one setting")
        return SimpleNamespace(
            bLength=9,
            bDescriptorType=4,
            bInterfaceNumber=0,
            bAlternateSetting=0,
            bNumEndpoints=1,
            bInterfaceClass=0xFF,
            bInterfaceSubClass=0,
            bInterfaceProtocol=0,
            iInterface=0,
            extra_descriptors=[],
        )

    def get_endpoint_descriptor(
        self, dev: FakeUsbDevice, ep: int, intf: int, alt: int, config: int
    ) -> Any:
        if ep != 0:
            raise IndexError("one endpoint")
        return SimpleNamespace(
            bLength=7,
            bDescriptorType=5,
            bEndpointAddress=0x81,
            bmAttributes=0x02,  # bulk
            wMaxPacketSize=512,
            bInterval=0,
            bRefresh=0,
            bSynchAddress=0,
            extra_descriptors=[],
        )

    def set_configuration(self, dev_handle: FakeUsbDevice, config_value: int) -> None:
        pass

    def get_configuration(self, dev_handle: FakeUsbDevice) -> int:
        return 1

    def claim_interface(self, dev_handle: FakeUsbDevice, intf: int) -> None:
        self.claimed.add(intf)

    def release_interface(self, dev_handle: FakeUsbDevice, intf: int) -> None:
        self.claimed.discard(intf)

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
        if not isinstance(dev_handle, ReferenceInstrument) or bmRequestType not in (0xC0, 0x40):
            return super().ctrl_transfer(
                dev_handle, bmRequestType, bRequest, wValue, wIndex, data, timeout
            )
        dev = dev_handle
        self._check_plugged(dev)
        if (bmRequestType, bRequest) == (0xC0, 0x01):
            info = dev.info()
            n = min(len(info), len(data))
            data[:n] = array.array("B", info[:n])
            return n
        if (bmRequestType, bRequest) == (0x40, 0x02):
            with dev.lock:
                dev.started_ns, dev.next_packet, dev.streaming = time.monotonic_ns(), 0, True
            return 0
        if (bmRequestType, bRequest) == (0x40, 0x03):
            dev.streaming = False
            return 0
        raise usb.core.USBError("Pipe error", -9, errno.EPIPE)

    def _check_plugged(self, dev: ReferenceInstrument) -> None:
        if (
            dev.unplug_after_s is not None
            and dev.started_ns
            and time.monotonic_ns() - dev.started_ns >= dev.unplug_after_s * 1e9
        ):
            raise usb.core.USBError(
                "No such device (it may have been disconnected)", -4, errno.ENODEV
            )

    def bulk_read(
        self, dev_handle: FakeUsbDevice, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        dev = dev_handle
        assert isinstance(dev, ReferenceInstrument) and ep == 0x81 and 0 in self.claimed
        deadline = time.monotonic_ns() + timeout * 1_000_000
        while True:
            self._check_plugged(dev)
            with dev.lock:
                due = dev.packet_due_ns(dev.next_packet) if dev.streaming else None
                if due is not None and dev.late_every and dev.next_packet % dev.late_every == 0:
                    due += 3_000_000
            now = time.monotonic_ns()
            if due is not None and due <= now:
                break
            if now >= deadline:
                raise usb.core.USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT)
            wait = (min(due, deadline) if due is not None else deadline) - now
            time.sleep(min(wait / 1e9, 0.05))
        with dev.lock:
            packet, dev.next_packet = dev.next_packet, dev.next_packet + 1
        raw = dev.packet(packet)
        n = min(len(raw), len(buff))
        buff[:n] = array.array("B", raw[:n])
        return n
