"""The sample sink: an instrument's samples written in chunks that stay readable if the writer dies.

The same contract as the camera's :class:`~labrig.capture.sink.SegmentSink`, with chunks of rows
for segments (:mod:`labrig.capture.samples`): each block is appended and flushed at once, so a kill
loses no whole sample; when a chunk holds ``segment_seconds`` of samples it is fsynced and hashed
(SHA-256) before the next one opens, and reported to the recorder for its manifest.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from labrig.capture.manifest import SegmentV1
from labrig.capture.samples import SampleBlock, SampleMode, chunk_name, format_rows
from labrig.capture.sink import SegmentClosed, SinkError
from labrig.fsutil import sha256_file


class SampleSink:
    """Threading: every method is called from the one writer thread."""

    def __init__(
        self,
        folder: Path,
        mode: SampleMode,
        segment_seconds: float,
        on_segment_closed: SegmentClosed,
        *,
        device_clock: bool = True,
    ) -> None:
        self.folder, self.mode = folder, mode
        self.samples_per_chunk = max(1, round(segment_seconds * mode.rate_hz))
        self._on_closed = on_segment_closed
        self._index = -1
        self._file: IO[str] | None = None
        self._rows = 0
        self._first_ns = self._last_ns = 0
        self.bytes_closed = 0

    def setup(self) -> str:
        return self._open_next()

    def _open_next(self) -> str:
        self._index += 1
        name = chunk_name(self._index)
        try:
            # held open for the whole chunk
            self._file = open(self.folder / name, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
            self._file.write(self.mode.header())
            self._file.flush()
        except OSError as exc:
            raise SinkError(
                f"cannot create {self.folder / name} ({exc.strerror}); check the data folder has "
                "space and permissions"
            ) from exc
        self._rows = 0
        return name

    def append(self, block: SampleBlock) -> None:
        """Write one block of samples (split over chunks when it crosses one's end)."""
        if block.values.ndim != 2 or block.values.shape[1] != len(self.mode.channels):
            raise SinkError(
                f"the instrument sent {block.values.shape[-1]} channels while recording "
                f"{len(self.mode.channels)}; recording stopped, samples so far are kept"
            )
        start = 0
        while start < len(block):
            stop = min(len(block), start + self.samples_per_chunk - self._rows)
            self._write(block, start, stop)
            start = stop
            if self._rows >= self.samples_per_chunk:
                self._close_current(roll=True)

    def _write(self, block: SampleBlock, start: int, stop: int) -> None:
        assert self._file is not None
        try:
            self._file.write(format_rows(block, self.mode.rate_hz, start, stop))
            self._file.flush()  # in the kernel's hands: a killed process loses no whole row
        except OSError as exc:
            raise SinkError(
                f"writing to {self.folder} failed ({exc.strerror}); recording stopped, "
                "samples so far are kept"
            ) from exc
        period = 1e9 / self.mode.rate_hz
        if self._rows == 0:
            self._first_ns = block.mono_ns + round(start * period)
        self._last_ns = block.mono_ns + round((stop - 1) * period)
        self._rows += stop - start

    def open_bytes(self) -> int:
        if self._file is None:
            return 0
        try:
            return (self.folder / chunk_name(self._index)).stat().st_size
        except OSError:
            return 0

    def close(self) -> None:
        if self._file is not None:
            self._close_current(roll=False)

    def _close_current(self, roll: bool) -> None:
        assert self._file is not None
        path = self.folder / chunk_name(self._index)
        if self._rows == 0:  # stopped right after a roll: nothing to keep
            self._file.close()
            self._file = None
            path.unlink(missing_ok=True)
            return
        try:
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            digest, size = sha256_file(path)
        except OSError as exc:
            raise SinkError(f"closing a chunk in {self.folder} failed ({exc.strerror})") from exc
        chunk = SegmentV1(
            chunk_name(self._index), "", self._rows, digest, size, self._first_ns, self._last_ns
        )
        self.bytes_closed += size
        next_open = self._open_next() if roll else None
        self._on_closed(chunk, next_open)
