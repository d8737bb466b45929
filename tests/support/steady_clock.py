"""A steady clock for recordings of the virtual camera, however loaded the machine is.

The recorder stamps each frame with the clock it is given when its grab thread gets the frame, and
counts a gap of more than 1.5 frame periods between two arrivals as frames the device dropped. The
virtual camera never skips a frame (frame n is the scene at n / fps; a reader that falls behind gets
every frame, late), but on a busy machine the grab thread is now and then kept off the CPU for
longer than that: a recording made there on the wall clock has "dropped" frames, a degraded result
and timestamps that are not the scene's time.

Tests that need a recording, not a race with the scheduler, give the recorder a :class:`SteadyClock`
through its own seam (``Recorder(clock=...)``): the k-th frame is stamped k frame periods after the
first, as a camera's own clock stamps its frames. Everything else (the frames, the segments, the
commit, the analysis) is the real code. Tests of the recorder's timing itself (stalls counted as
drops) record on the wall clock.
"""

from __future__ import annotations

import threading
import time

FPS = 30.0  # every recording mode the tests use


class SteadyClock:
    """A :data:`labrig.capture.FrameClock` whose stamps are ``1 / fps`` apart, from the first
    one."""

    def __init__(self, fps: float = FPS) -> None:
        self._period_ns = round(1e9 / fps)
        self._lock = threading.Lock()
        self._first: tuple[int, int] | None = None
        self._taken = 0

    def __call__(self) -> tuple[int, int]:
        with self._lock:
            if self._first is None:
                self._first = (time.monotonic_ns(), time.time_ns())
            mono, utc = self._first
            offset = self._taken * self._period_ns
            self._taken += 1
        return mono + offset, utc + offset
