"""The review player's pace: which frame is due now while playing, by a clock against the frames'
recorded times (not by counting timer ticks, which drifts and slows whenever decoding is slow).

Threading contract: GUI thread only.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from PySide6.QtCore import QElapsedTimer


class Pace:
    """From the recorded time of the frame playing started (or was sought) at, ``speed`` seconds
    of recording per second of clock, forwards or backwards."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.from_s = 0.0
        self.direction = 1
        self.speed = 1.0

    def start(self, times_s: npt.NDArray[np.float64], index: int) -> None:
        """Pace from frame ``index`` (of the recorded times ``times_s``), from now."""
        self.from_s = float(times_s[index]) if len(times_s) else 0.0
        self.clock.start()

    def due(self, times_s: npt.NDArray[np.float64]) -> int:
        """The frame on screen now: the last one whose time has come (the first one not yet
        passed, playing backwards), within the recording."""
        if not len(times_s):
            return 0
        at = self.from_s + self.direction * self.speed * self.clock.elapsed() / 1000.0
        if self.direction < 0:
            k = int(np.searchsorted(times_s, at, side="left"))
        else:
            k = int(np.searchsorted(times_s, at, side="right")) - 1
        return min(max(k, 0), len(times_s) - 1)
