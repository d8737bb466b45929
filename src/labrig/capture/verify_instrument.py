"""Instruments: which devices stream samples, opening one, and probing it before it records.

An instrument streams samples when its inventory entry names a ``protocol``: the virtual rig's
force plate (``labrig-virtual``) or a USB instrument speaking ``labrig-bulk/1``
(:mod:`labrig.capture.usb_instrument`). The probe opens it, takes the rate, channels and units it
announces, and reads for ``probe_seconds``: it passes when samples arrive at 0.9 × that rate or
more, counted on the instrument's sample counter over the host's clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.inventory import InventoryEntry
from labrig.capture.rig_camera import VirtualRig
from labrig.capture.samples import SampleMode, SampleSource
from labrig.capture.usb_instrument import UsbSampleSource
from labrig.capture.verdicts import MeasuredMode, Refusal, Verification, redact, refuse, who
from labrig.capture.virtual_instrument import VirtualForcePlate
from labrig.errors import LabrigError

OpenSamples = Callable[[DeviceInfo], SampleSource]
SETTLE_S = 0.1


def streams_samples(device: DeviceInfo, entry: InventoryEntry | None) -> bool:
    """Whether ``device`` (matched to ``entry``) is an instrument Labrig records samples from."""
    return entry is not None and entry.protocol is not None and entry.kind == device.kind


def default_open_samples(
    device: DeviceInfo, rig: VirtualRig | None = None, usb_backend: Any = None
) -> SampleSource:
    """The sample source of an instrument: the virtual rig's force plate (of ``rig``), or a USB
    instrument through pyusb (``usb_backend``; None: libusb1)."""
    if device.kind is DeviceKind.VIRTUAL_INSTRUMENT:
        return VirtualForcePlate(rig or VirtualRig())
    if device.kind is DeviceKind.USB_INSTRUMENT:
        return UsbSampleSource(device, usb_backend)
    raise LabrigError(
        f"{device.name} is a {device.kind.value} device and streams no samples",
        code=Refusal.OPEN_FAILED,
    )


def probe_instrument(
    device: DeviceInfo,
    entry_id: str,
    open_samples: OpenSamples,
    probe_seconds: float,
    rate_tolerance: float = 0.9,
) -> Verification:
    """Open the instrument, read it for ``probe_seconds`` and judge the samples that came."""
    source = open_samples(device)
    try:
        mode = source.open(None)
    except LabrigError as exc:
        source.close()
        code = (
            Refusal.INSTRUMENT_PROTOCOL
            if exc.code == Refusal.INSTRUMENT_PROTOCOL
            else Refusal.OPEN_FAILED
        )
        return refuse(
            device,
            entry_id,
            None,
            code,
            f"Labrig could not open {who(device)}: {redact(device, exc.message)}",
        )
    except OSError as exc:
        source.close()
        return refuse(
            device,
            entry_id,
            None,
            Refusal.OPEN_FAILED,
            f"Labrig could not open {who(device)} ({exc}); reconnect it and verify again.",
        )
    try:
        got = _read(source, mode, probe_seconds)
    except LabrigError as exc:
        return _refused(
            device,
            entry_id,
            mode,
            Refusal.INSTRUMENT_PROTOCOL,
            f"{who(device)} broke its protocol while being tested: {exc.message}. "
            "Update its firmware, or check its inventory entry.",
        )
    finally:
        source.close()
    samples, span, ended = got
    rate = samples / span if span > 0 else 0.0
    measured = MeasuredMode(0, 0, rate, samples)
    if samples == 0 or ended:
        return _refused(
            device,
            entry_id,
            mode,
            Refusal.NO_FRAMES,
            f"{who(device)} opened but sent {'no' if not samples else 'too few'} "
            "samples in the test. Check its cable and power, then verify again.",
            measured,
        )
    if rate < rate_tolerance * mode.rate_hz:
        return _refused(
            device,
            entry_id,
            mode,
            Refusal.FPS_TOO_LOW,
            f"{who(device)} delivered {rate:.0f} samples per second instead of "
            f"{mode.rate_hz:g}. Give it a USB port of its own (not behind a busy hub) "
            "and verify again.",
            measured,
        )
    return Verification(
        True,
        device,
        entry_id,
        None,
        measured,
        None,
        f"{who(device)} verified: {mode.label()} ({', '.join(c.header() for c in mode.channels)}),"
        f" {rate:.0f} samples per second measured.",
        stream=mode,
    )


def _refused(
    device: DeviceInfo,
    entry_id: str,
    mode: SampleMode,
    code: Refusal,
    reason: str,
    measured: MeasuredMode | None = None,
) -> Verification:
    return Verification(False, device, entry_id, None, measured, code.value, reason, stream=mode)


def _read(source: SampleSource, mode: SampleMode, seconds: float) -> tuple[int, float, bool]:
    """(samples delivered after the settling time, the span they cover on their stamps in s,
    whether the instrument stopped). A sample it skipped is not counted."""
    start: float | None = None
    end = 0.0
    delivered = 0
    deadline: float | None = None
    timeout = max(1.0, 64 / mode.rate_hz)
    while deadline is None or time.monotonic() < deadline:
        block = source.read_block(timeout)
        if block is None:
            return delivered, end - start if start is not None else 0.0, True
        block_end = block.mono_ns / 1e9 + len(block) / mode.rate_hz
        if deadline is None:  # the first block: the settling time starts
            deadline, settle_until = time.monotonic() + SETTLE_S + seconds, block_end + SETTLE_S
        elif block_end >= settle_until:
            if start is None:
                start = block_end  # counted from the end of the first block after settling
            else:
                delivered += len(block)
            end = block_end
    return delivered, end - start if start is not None else 0.0, False
