"""Frame sources: what the recording engine reads from, whatever the device.

A source is opened in a mode, then read frame by frame from one thread (the
grab thread). ``read`` blocks until the next frame and returns None when the
source has ended or the device stopped answering within the timeout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
MJPG_BYTES_PER_PIXEL = 0.25  # generous: MJPG at quality 90 of a busy scene


@dataclass(frozen=True)
class Mode:
    """A capture mode: frame size, frame rate and the pixel format the device delivers."""

    width: int
    height: int
    fps: float
    pixel_format: str = "BGR"

    def label(self) -> str:
        return f"{self.width}x{self.height}@{self.fps:g} {self.pixel_format}"

    def to_json(self) -> dict[str, object]:
        return {
            "width": self.width,
            "height": self.height,
            "fps": self.fps,
            "pixel_format": self.pixel_format,
        }

    def bytes_per_second(self) -> float:
        """What a recording in this mode writes per second, estimated on the high side (MJPG
        of a busy scene)."""
        return self.width * self.height * self.fps * MJPG_BYTES_PER_PIXEL


@dataclass(frozen=True)
class TimedFrame:
    """A frame and its times, from a source that knows them: ``mono_ns`` on the host's monotonic
    clock (when it was exposed, as a camera driver stamps its buffers, however late the reader
    is), ``device_index`` and ``device_ns`` on the device's own frame counter and clock."""

    image: Image
    mono_ns: int
    device_index: int
    device_ns: int


class FrameSource(Protocol):
    """Threading: ``open``/``read``/``close`` are called from one thread at a time
    (the grab thread)."""

    def open(self, mode: Mode | None = None) -> Mode:
        """Open the device, ask for ``mode`` (None: its default) and return the mode it reports."""
        ...

    def read(self, timeout_s: float = 2.0) -> Image | None:
        """The next frame as an H×W×3 BGR uint8 array, or None if none came in ``timeout_s``."""
        ...

    def close(self) -> None: ...


def read_timed(source: FrameSource, timeout_s: float) -> tuple[Image | None, TimedFrame | None]:
    """The next frame of ``source``, and its times when the source gives them (a ``read_timed``
    method returning a :class:`TimedFrame`); (None, None) when none came."""
    timed = getattr(source, "read_timed", None)
    if timed is None:
        return source.read(timeout_s), None
    frame = timed(timeout_s)
    return (frame.image, frame) if frame is not None else (None, None)
