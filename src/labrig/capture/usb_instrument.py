"""The USB driver for instruments that speak ``labrig-bulk/1``: vendor requests and one bulk pipe.

The protocol (docs/rigs.md, "Instruments"), little-endian throughout:

* Interface 0 of configuration 1; the samples come on the bulk IN endpoint ``0x81``.
* ``GET_INFO``: vendor request IN (``bmRequestType 0xC0``, ``bRequest 0x01``, up to 1024 bytes):
  ``"LBI1"``, u8 version (1), u8 channel count, u16 samples per packet, u32 rate in Hz, then per
  channel 16 bytes of name and 8 of unit (ASCII, NUL-padded).
* ``START`` (``0x40``, ``0x02``): the instrument zeroes its sample counter and streams;
  ``STOP`` (``0x40``, ``0x03``).
* Each bulk transfer is one packet: ``"LBD1"``, u32 number of its first sample, u64 the instrument's
  time of that sample in µs, u16 samples in it, u16 flags (bit 0: the instrument's own buffer
  overflowed), then samples × channels float32, sample by sample.

Stamping on the host's clock: the packet's samples are placed on the instrument's clock, moved by
the smallest delay seen between a packet's last sample and its arrival over the last second (the
USB transfer's latency, its jitter filtered out); a clock that drifts against the host is followed
within that second.

A fault on the link (unplugged, a packet that breaks the protocol) ends the stream; what it sent
before is kept. Threading: one reader at a time.
"""

from __future__ import annotations

import errno
import struct
import time
from collections import deque
from typing import Any

import libusb_package
import numpy as np
import usb.core
import usb.util

from labrig.capture.devices import DeviceInfo
from labrig.capture.samples import Channel, SampleBlock, SampleMode, check_mode
from labrig.errors import LabrigError

PROTOCOL = "labrig-bulk/1"
EP_IN = 0x81
REQ_GET_INFO, REQ_START, REQ_STOP = 0x01, 0x02, 0x03
VENDOR_IN, VENDOR_OUT = 0xC0, 0x40
INFO = struct.Struct("<4sBBHI")
INFO_CHANNEL = struct.Struct("<16s8s")
PACKET = struct.Struct("<4sIQHH")
MAX_TRANSFER = 1 << 16
FLAG_OVERFLOW = 0x1
LATENCY_WINDOW_S = 1.0


class InstrumentProtocolError(LabrigError):
    """The instrument answered, but not in ``labrig-bulk/1``: the wrong firmware, or the wrong
    inventory entry for it."""

    code = "LABRIG_INSTRUMENT_PROTOCOL"


class InstrumentOpenError(LabrigError):
    code = "LABRIG_DEVICE_OPEN_FAILED"


def parse_info(raw: bytes) -> tuple[SampleMode, int]:
    """The mode and samples per packet of a ``GET_INFO`` reply; refused when it is not one."""
    if len(raw) < INFO.size:
        raise InstrumentProtocolError(f"its GET_INFO reply is {len(raw)} bytes, too short")
    magic, version, count, per_packet, rate = INFO.unpack_from(raw)
    if magic != b"LBI1" or version != 1:
        raise InstrumentProtocolError(
            f"its GET_INFO reply starts {magic!r} version {version}, not b'LBI1' version 1"
        )
    if len(raw) < INFO.size + count * INFO_CHANNEL.size or per_packet < 1:
        raise InstrumentProtocolError(f"its GET_INFO reply does not hold its {count} channels")
    channels = []
    for i in range(count):
        name, unit = INFO_CHANNEL.unpack_from(raw, INFO.size + i * INFO_CHANNEL.size)
        channels.append(Channel(_text(name), _text(unit)))
    try:
        return check_mode(SampleMode(float(rate), tuple(channels))), per_packet
    except ValueError as exc:
        raise InstrumentProtocolError(f"it announces {exc}, which Labrig does not record") from None


def _text(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("ascii", "replace")


def parse_packet(raw: bytes, channels: int) -> tuple[int, int, np.ndarray, int]:
    """(first sample, its device time in ns, values samples × channels, flags) of one packet."""
    if len(raw) < PACKET.size:
        raise InstrumentProtocolError(f"a data packet of {len(raw)} bytes is too short")
    magic, first, device_us, count, flags = PACKET.unpack_from(raw)
    if magic != b"LBD1":
        raise InstrumentProtocolError(f"a data packet starts {magic!r}, not b'LBD1'")
    body = raw[PACKET.size :]
    if len(body) != count * channels * 4:
        raise InstrumentProtocolError(
            f"a data packet says {count} samples of {channels} channels but holds {len(body)} bytes"
        )
    values = np.frombuffer(body, dtype="<f4").reshape(count, channels).astype(np.float64)
    return first, device_us * 1000, values, flags


class UsbSampleSource:
    """An instrument speaking ``labrig-bulk/1``, through pyusb (``backend``: a pyusb backend;
    None: libusb-package's libusb1)."""

    def __init__(self, device: DeviceInfo, backend: Any = None) -> None:
        self.device, self.backend = device, backend
        self._dev: Any = None
        self._mode: SampleMode | None = None
        self._delays: deque[tuple[float, int]] = deque()
        self.device_overflows = 0

    def _find(self) -> Any:
        backend = self.backend if self.backend is not None else libusb_package.get_libusb1_backend()
        bus, _, address = self.device.address.partition(":")
        for dev in usb.core.find(find_all=True, backend=backend) or ():
            if (
                str(dev.bus) == bus
                and str(dev.address) == address
                and (dev.idVendor, dev.idProduct) == (self.device.vendor_id, self.device.product_id)
            ):
                return dev
        raise InstrumentOpenError(
            f"{self.device.name} is no longer at USB {self.device.address}; reconnect it and "
            "run 'labrig devices'"
        )

    def open(self, mode: SampleMode | None = None) -> SampleMode:
        dev = self._find()
        try:
            dev.set_configuration()
            usb.util.claim_interface(dev, 0)
            info = bytes(dev.ctrl_transfer(VENDOR_IN, REQ_GET_INFO, 0, 0, 1024, timeout=1000))
        except usb.core.USBError as exc:
            usb.util.dispose_resources(dev)
            raise InstrumentOpenError(_usb_advice(self.device, exc)) from exc
        try:
            streams, _ = parse_info(info)
            if mode is not None and mode != streams:
                raise InstrumentProtocolError(
                    f"it streams {streams.label()} now, the rig asks for {mode.label()}; set the "
                    "instrument back, or make the rig again"
                )
            dev.ctrl_transfer(VENDOR_OUT, REQ_START, 0, 0, None, timeout=1000)
        except (usb.core.USBError, InstrumentProtocolError) as exc:
            usb.util.dispose_resources(dev)
            if isinstance(exc, InstrumentProtocolError):
                raise InstrumentProtocolError(f"{self.device.name}: {exc.message}") from None
            raise InstrumentOpenError(_usb_advice(self.device, exc)) from exc
        self._dev, self._mode = dev, streams
        self._delays.clear()
        return streams

    def read_block(self, timeout_s: float = 2.0) -> SampleBlock | None:
        """The next packet as a block; None when none came in ``timeout_s`` or the link failed.
        A packet that breaks the protocol raises :class:`InstrumentProtocolError`."""
        if self._dev is None or self._mode is None:
            return None
        try:
            raw = bytes(self._dev.read(EP_IN, MAX_TRANSFER, timeout=max(1, round(timeout_s * 1e3))))
        except usb.core.USBTimeoutError:
            return None
        except usb.core.USBError:
            return None  # unplugged, or the link broke: the recorder says so and keeps the rest
        arrived = time.monotonic_ns()
        first, device_ns, values, flags = parse_packet(raw, len(self._mode.channels))
        if flags & FLAG_OVERFLOW:
            self.device_overflows += 1
        period = 1e9 / self._mode.rate_hz
        delay = arrived - (device_ns + round((len(values) - 1) * period))
        self._delays.append((arrived / 1e9, delay))
        while self._delays and self._delays[0][0] < arrived / 1e9 - LATENCY_WINDOW_S:
            self._delays.popleft()
        offset = min(d for _, d in self._delays)
        return SampleBlock(first, device_ns + offset, device_ns, values)

    def close(self) -> None:
        dev, self._dev = self._dev, None
        if dev is None:
            return
        try:
            dev.ctrl_transfer(VENDOR_OUT, REQ_STOP, 0, 0, None, timeout=500)
            usb.util.release_interface(dev, 0)
        except usb.core.USBError:
            pass  # unplugged: nothing to stop
        finally:
            usb.util.dispose_resources(dev)


def _usb_advice(device: DeviceInfo, exc: usb.core.USBError) -> str:
    if getattr(exc, "errno", None) in (errno.EACCES, errno.EPERM):
        return (
            f"Labrig may not open {device.name} ({device.vid_pid}): on Linux install the udev "
            "rule that grants the lab group access (docs/rigs.md), on Windows bind the WinUSB "
            "driver to it; then verify again"
        )
    if getattr(exc, "errno", None) == errno.EBUSY:
        return (
            f"{device.name} is claimed by another program or driver; close it (or detach the "
            "kernel driver) and verify again"
        )
    return f"{device.name} did not answer ({exc}); reconnect it and verify again"
