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
