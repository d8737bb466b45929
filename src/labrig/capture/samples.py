"""Sample streams: what an instrument (a force plate, an EMG amplifier, a USB data logger) gives.

An instrument streams blocks of samples: ``channels`` values per sample, at ``rate_hz``, each
sample numbered on the instrument's own counter. A :class:`SampleSource` is opened (it reports
its :class:`SampleMode`: rate, channel names and units) and read block by block from one thread,
as a camera is read frame by frame.

Recorded samples are written in chunks, ``seg-NNNNN.samples.csv``, one row per sample::

    sample,mono_ns,device_ns,Fx (N),Fy (N),Fz (N),…

``mono_ns`` is the sample's instant on the host's monotonic clock (the clock the cameras' frames
are stamped on), ``device_ns`` on the instrument's own. Rows are appended and flushed a block at a
time, so a killed writer leaves every whole row readable: a row cut short ends the chunk
(:func:`read_chunk`), and only whole rows are counted (:func:`count_samples`), hashed and
committed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from labrig.capture.sources import Mode
from labrig.fsutil import NotARegularFileError, open_regular

SAMPLES_KIND = "samples"  # a sample mode's "kind", in a capture's mode JSON
CHUNK_SUFFIX = ".samples.csv"
CHUNK_NAME = re.compile(r"^seg-\d{5}\.samples\.csv$")
FIXED_COLUMNS = ("sample", "mono_ns", "device_ns")
MAX_CHANNELS = 64
UNIT = re.compile(r"^[A-Za-z0-9*/^.%°µ-]{0,12}$")
CHANNEL = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,15}$")
Values = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Channel:
    name: str
    unit: str

    def header(self) -> str:
        return f"{self.name} ({self.unit})" if self.unit else self.name


@dataclass(frozen=True)
class SampleMode:
    """What an instrument streams: ``rate_hz`` samples a second of ``channels``."""

    rate_hz: float
    channels: tuple[Channel, ...]

    @property
    def fps(self) -> float:
        """Samples per second: what a recorder paces itself by, as by a camera's frame rate."""
        return self.rate_hz

    def label(self) -> str:
        return f"{len(self.channels)} ch @ {self.rate_hz:g} Hz"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": SAMPLES_KIND,
            "rate_hz": self.rate_hz,
            "channels": [{"name": c.name, "unit": c.unit} for c in self.channels],
        }

    def bytes_per_second(self) -> float:
        """What a recording writes per second, on the high side: 48 bytes of counters and times
        and 14 per value, per sample."""
        return self.rate_hz * (48 + 14 * len(self.channels))

    def header(self) -> str:
        return ",".join((*FIXED_COLUMNS, *(c.header() for c in self.channels))) + "\n"


def is_sample_mode(mode: Mapping[str, Any]) -> bool:
    """Whether a capture's mode JSON is an instrument's (else a camera's)."""
    return mode.get("kind") == SAMPLES_KIND


def stream_mode(data: Mapping[str, Any]) -> Mode | SampleMode:
    """A stored mode JSON as a camera's :class:`~labrig.capture.sources.Mode` or an instrument's
    :class:`SampleMode`."""
    if is_sample_mode(data):
        return sample_mode_from_json(data)
    return Mode(**data)


def sample_mode_from_json(data: Mapping[str, Any]) -> SampleMode:
    """The :class:`SampleMode` of a mode JSON :meth:`SampleMode.to_json` wrote; ``ValueError``
    when it is not one."""
    rate, channels = data.get("rate_hz"), data.get("channels")
    if not is_sample_mode(data) or not isinstance(channels, list):
        raise ValueError("not a sample stream's mode")
    if isinstance(rate, bool) or not isinstance(rate, int | float):
        raise ValueError("its rate is not a number")
    return check_mode(
        SampleMode(
            float(rate),
            tuple(
                Channel(str(c.get("name", "")), str(c.get("unit", "")))
                for c in channels
                if isinstance(c, Mapping)
            ),
        )
    )


def check_mode(mode: SampleMode) -> SampleMode:
    """``mode`` when it is one a recording can keep (a rate of 1 Hz to 100 kHz, 1 to 64 named
    channels with short units); ``ValueError`` saying what is wrong otherwise."""
    if not (math.isfinite(mode.rate_hz) and 1 <= mode.rate_hz <= 100_000):
        raise ValueError(f"a rate of {mode.rate_hz} Hz (1 Hz to 100 kHz are recorded)")
    if not 1 <= len(mode.channels) <= MAX_CHANNELS:
        raise ValueError(f"{len(mode.channels)} channels (1 to {MAX_CHANNELS} are recorded)")
    for c in mode.channels:
        if not CHANNEL.match(c.name) or not UNIT.match(c.unit):
            raise ValueError(f"a channel named {c.name!r} in {c.unit!r}")
    if len({c.name for c in mode.channels}) != len(mode.channels):
        raise ValueError("two channels of the same name")
    return mode


@dataclass(frozen=True)
class SampleBlock:
    """Consecutive samples from an instrument: the first one's number on its counter, its instant
    on the host's monotonic clock and on the instrument's own, and the values (samples × channels).
    Sample k of the block is ``k`` sample periods after the first."""

    first_index: int
    mono_ns: int
    device_ns: int
    values: Values

    def __len__(self) -> int:
        return int(self.values.shape[0])


class SampleSource(Protocol):
    """Threading: ``open``/``read_block``/``close`` are called from one thread at a time."""

    def open(self, mode: SampleMode | None = None) -> SampleMode:
        """Open the instrument and return the mode it streams in (``mode``: what the rig asks
        for; an instrument that streams otherwise refuses)."""
        ...

    def read_block(self, timeout_s: float = 2.0) -> SampleBlock | None:
        """The next block, or None when none came in ``timeout_s`` (the instrument stopped)."""
        ...

    def close(self) -> None: ...


def chunk_name(index: int) -> str:
    return f"seg-{index:05d}{CHUNK_SUFFIX}"


def is_sample_chunk(path: Path | str) -> bool:
    return Path(path).name.endswith(CHUNK_SUFFIX)


def format_rows(block: SampleBlock, rate_hz: float, start: int = 0, stop: int | None = None) -> str:
    """Rows ``start`` to ``stop`` of ``block`` as chunk text."""
    stop = len(block) if stop is None else stop
    period = 1e9 / rate_hz
    lines = []
    for k in range(start, stop):
        at = round(k * period)
        values = ",".join(f"{v:.9g}" for v in block.values[k])  # float32 round-trips
        lines.append(
            f"{block.first_index + k},{block.mono_ns + at},{block.device_ns + at},{values}"
        )
    return "\n".join(lines) + "\n" if lines else ""


@dataclass(frozen=True)
class Chunk:
    """The whole rows of a chunk: sample numbers, host and device instants, values."""

    channels: tuple[str, ...]  # the header's channel columns, e.g. "Fz (N)"
    index: npt.NDArray[np.int64]
    mono_ns: npt.NDArray[np.int64]
    device_ns: npt.NDArray[np.int64]
    values: Values

    def __len__(self) -> int:
        return int(self.index.shape[0])


MAX_ROW_BYTES = 4096


def read_chunk(path: Path) -> Chunk:
    """Every whole row of a chunk (a row cut short or damaged ends it). Raises ``OSError`` when it
    cannot be read, :class:`~labrig.fsutil.NotARegularFileError` when something else stands
    there."""
    index: list[int] = []
    mono: list[int] = []
    device: list[int] = []
    values: list[list[float]] = []
    with open_regular(path) as fh:
        header = fh.readline(MAX_ROW_BYTES).decode("utf-8", "replace").rstrip("\r\n").split(",")
        channels = tuple(header[len(FIXED_COLUMNS) :])
        width = len(header)
        if tuple(header[: len(FIXED_COLUMNS)]) != FIXED_COLUMNS or not channels:
            channels, width = (), 0
        while width and (line := fh.readline(MAX_ROW_BYTES)):
            parts = line.rstrip(b"\r\n").split(b",")
            if not line.endswith(b"\n") or len(parts) != width:
                break
            try:
                row = [int(p) for p in parts[:3]]
                data = [float(p) for p in parts[3:]]
            except ValueError:
                break
            index.append(row[0])
            mono.append(row[1])
            device.append(row[2])
            values.append(data)
    return Chunk(
        channels,
        np.asarray(index, dtype=np.int64),
        np.asarray(mono, dtype=np.int64),
        np.asarray(device, dtype=np.int64),
        np.asarray(values, dtype=np.float64).reshape(len(values), len(channels)),
    )


def count_samples(path: Path) -> int:
    """The whole rows of a chunk (0 when it cannot be read as one)."""
    try:
        return len(read_chunk(path))
    except (OSError, NotARegularFileError):
        return 0
