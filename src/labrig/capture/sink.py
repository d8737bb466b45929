"""The sink: writes frames into short segments that stay readable if the writer dies.

MJPG in AVI: measured here, a killed writer leaves a file readable up to its
last flushed frame, at ~190 fps for 720p on one core (plain MP4 is unreadable
after a kill). Each segment has a sidecar of per-frame timestamps; when a
segment closes it is fsynced and hashed (SHA-256) before the next one opens.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import cv2

from labrig.capture.manifest import SegmentV1
from labrig.capture.sources import Image, Mode
from labrig.errors import LabrigError
from labrig.fsutil import fsync_file, open_regular, sha256_file

FOURCC = cv2.VideoWriter.fourcc(*"MJPG")
SegmentClosed = Callable[[SegmentV1, str | None], None]


class SinkError(LabrigError):
    """The media could not be written (disk full, folder gone): recording stops, what was
    written is kept."""

    code = "LABRIG_CAPTURE_WRITE_FAILED"


def segment_name(index: int) -> str:
    return f"seg-{index:05d}.avi"


def timestamps_name(index: int) -> str:
    return f"seg-{index:05d}.ts.csv"


class SegmentSink:
    """Threading: every method is called from the one writer thread.

    ``on_segment_closed(segment, next_open_name)`` is called after each segment is
    durable, so the caller can record it in the manifest before going on.
    """

    def __init__(
        self,
        folder: Path,
        mode: Mode,
        segment_seconds: float,
        on_segment_closed: SegmentClosed,
        *,
        device_clock: bool = False,
        first_segment_share: float = 1.0,
    ) -> None:
        self.folder, self.mode = folder, mode
        # the device's own frame counter and clock, in two more columns, when it has them
        self.device_clock = device_clock
        self.frames_per_segment = max(1, round(segment_seconds * mode.fps))
        # the first segment may be shorter (a rig's devices close theirs at different instants)
        self._limit = max(1, round(first_segment_share * self.frames_per_segment))
        self._on_closed = on_segment_closed
        self._index = -1
        self._writer: cv2.VideoWriter | None = None
        self._stamps: IO[str] | None = None
        self._frames = 0
        self._first_ns = self._last_ns = 0
        self.bytes_closed = 0

    def setup(self) -> str:
        """Open the first segment and return its name."""
        return self._open_next()

    def _open_next(self) -> str:
        self._index += 1
        name = segment_name(self._index)
        # FFmpeg's MJPG encoder, at its own rate control: it ignores VIDEOWRITER_PROP_QUALITY (set()
        # returns False). OpenCV's built-in MJPEG writer honours quality 90 but encoded 720p at ~84
        # fps here, too slow for 720p60 on a busy core, and files ~18x larger. Tracking accuracy is
        # validated through this path.
        writer = cv2.VideoWriter(
            str(self.folder / name),
            cv2.CAP_FFMPEG,
            FOURCC,
            self.mode.fps,
            (self.mode.width, self.mode.height),
        )
        if not writer.isOpened():
            raise SinkError(
                f"cannot create {self.folder / name}; check the data folder has space and "
                "permissions"
            )
        self._writer = writer
        try:
            # held open for the whole segment
            self._stamps = open(self.folder / timestamps_name(self._index), "w", encoding="ascii")  # noqa: SIM115
            self._stamps.write(HEADER_DEVICE if self.device_clock else HEADER)
        except OSError as exc:
            raise SinkError(f"cannot write timestamps in {self.folder} ({exc.strerror})") from exc
        self._frames = 0
        if self._index:
            self._limit = self.frames_per_segment
        return name

    def append(
        self, image: Image, mono_ns: int, utc_ns: int, device: tuple[int, int] | None = None
    ) -> None:
        """Write one frame and its times (``device``: its index and time on the device's own
        counter and clock, written when the sink keeps them)."""
        assert self._writer is not None and self._stamps is not None
        if image.shape[1] != self.mode.width or image.shape[0] != self.mode.height:
            raise SinkError(
                f"the device sent {image.shape[1]}x{image.shape[0]} frames while recording "
                f"{self.mode.width}x{self.mode.height}; recording stopped, frames so far are kept"
            )
        self._writer.write(image)
        try:
            row = f"{self._frames},{mono_ns},{utc_ns}"
            if self.device_clock:
                index, device_ns = device or (-1, -1)
                row += f",{index},{device_ns}"
            self._stamps.write(row + "\n")
        except OSError as exc:
            raise SinkError(
                f"writing to {self.folder} failed ({exc.strerror}); recording stopped, "
                "frames so far are kept"
            ) from exc
        if self._frames == 0:
            self._first_ns = mono_ns
        self._last_ns = mono_ns
        self._frames += 1
        if self._frames >= self._limit:
            self._close_current(roll=True)

    def open_bytes(self) -> int:
        """Bytes of the open segment on disk so far (what the encoder has flushed); 0 when none
        is open."""
        if self._writer is None:
            return 0
        try:
            return (self.folder / segment_name(self._index)).stat().st_size
        except OSError:
            return 0

    def close(self) -> None:
        """Close the open segment (if it has frames) and report it; nothing is open afterwards."""
        if self._writer is not None:
            self._close_current(roll=False)

    def _close_current(self, roll: bool) -> None:
        assert self._writer is not None and self._stamps is not None
        self._writer.release()
        self._writer = None
        if self._frames == 0:  # stopped right after a roll: nothing to keep
            self._stamps.close()
            for name in (segment_name(self._index), timestamps_name(self._index)):
                (self.folder / name).unlink(missing_ok=True)
            return
        try:
            self._stamps.flush()
            os.fsync(self._stamps.fileno())
            self._stamps.close()
            media = self.folder / segment_name(self._index)
            fsync_file(media)
            digest, size = sha256_file(media)
        except OSError as exc:
            raise SinkError(f"closing a segment in {self.folder} failed ({exc.strerror})") from exc
        segment = SegmentV1(
            segment_name(self._index),
            timestamps_name(self._index),
            self._frames,
            digest,
            size,
            self._first_ns,
            self._last_ns,
        )
        self.bytes_closed += size
        next_open = self._open_next() if roll else None
        self._on_closed(segment, next_open)


def read_timestamps(path: Path) -> list[int]:
    """The ``mono_ns`` column of a sidecar this sink wrote. A row cut short (a killed writer),
    damaged or too long to be a row ends the list: every value returned is whole. Raises
    ``OSError`` when the file cannot be read, :class:`~labrig.fsutil.NotARegularFileError` when
    something else stands there."""
    return [row[1] for row in read_sidecar(path)]


def read_sidecar(path: Path) -> list[tuple[int, ...]]:
    """Every whole row of a sidecar as integers: (frame, mono_ns, utc_ns), and the device's index
    and time where the sink kept them (-1 where the device gave none). Errors as
    :func:`read_timestamps`."""
    out: list[tuple[int, ...]] = []
    with open_regular(path) as fh:
        # the header says whether the device's columns follow
        width = 5 if fh.readline(MAX_ROW_BYTES).startswith(HEADER_DEVICE[:-1].encode()) else 3
        while line := fh.readline(MAX_ROW_BYTES):
            parts = line.rstrip(b"\r\n").split(b",")
            if (
                not line.endswith(b"\n")
                or len(parts) != width
                or not all(p.isdigit() for p in parts[:3])
                or not all(p.removeprefix(b"-").isdigit() for p in parts[3:])
            ):
                break
            out.append(tuple(int(p) for p in parts))
    return out


HEADER = "frame,mono_ns,utc_ns\n"
HEADER_DEVICE = "frame,mono_ns,utc_ns,device_index,device_ns\n"
MAX_ROW_BYTES = 128  # "index,mono_ns,utc_ns,device_index,device_ns" is under 100


# what a recorder stamps each frame with: (monotonic ns, UTC ns)
FrameClock = Callable[[], tuple[int, int]]


def now_ns() -> tuple[int, int]:
    """(monotonic ns, UTC ns) of one instant, taken together: the clock frames are stamped with."""
    return time.monotonic_ns(), time.time_ns()


class SteadyClock:
    """A camera's own clock: the k-th frame is stamped ``k / fps`` after the first, whenever the
    recorder happens to receive it.

    The recorder stamps each frame when its grab thread gets it, and counts a gap of more than 1.5
    frame periods between two arrivals as frames the device dropped. The virtual camera never skips
    a frame (frame n is the scene at n / fps; a reader that falls behind gets every frame, late), so
    on the wall clock a busy machine, which now and then keeps the grab thread off the CPU, would
    give its recordings "dropped" frames and timestamps that are not the scene's time. Recordings of
    the virtual camera are stamped with this clock instead, as a real camera's driver stamps frames
    with the sensor's own clock (:meth:`CaptureService.frame_clock`).
    """

    def __init__(self, fps: float) -> None:
        self._period_ns = round(1e9 / fps)
        self._lock = threading.Lock()
        self._first: tuple[int, int] | None = None
        self._taken = 0

    def __call__(self) -> tuple[int, int]:
        with self._lock:
            if self._first is None:
                self._first = now_ns()
            mono, utc = self._first
            offset = self._taken * self._period_ns
            self._taken += 1
        return mono + offset, utc + offset
