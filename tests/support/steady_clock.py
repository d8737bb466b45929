"""A steady clock for recordings of the virtual camera, however loaded the machine is.

The recorder stamps each frame with the monotonic and UTC clocks when its grab thread gets it, and counts a gap
of more than 1.5 frame periods between two arrivals as frames the device dropped. The virtual camera never skips
a frame (frame n is the scene at n / fps; a reader that falls behind gets every frame, late), but on a busy
machine the grab thread is now and then kept off the CPU for longer than that: a recording made there against
the wall clock has "dropped" frames, a degraded result and timestamps that are not the scene's time.

Tests that need a recording, not a race with the scheduler, record under :func:`steady_clock`: the k-th frame a
grab thread takes is stamped k frame periods after its first one, as a camera's own clock stamps its frames.
Everything else (the frames, the segments, the commit, the analysis) is the real code. Tests of the recorder's
timing itself (stalls counted as drops, a full queue) do not use it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

from labrig.capture import recorder

FPS = 30.0  # every recording mode the tests use


@contextmanager
def steady_clock(fps: float = FPS) -> Iterator[None]:
    """While active, every recorder in this process stamps its frames ``1 / fps`` apart, from its first frame."""
    period_ns = round(1e9 / fps)
    lock = threading.Lock()
    # grab thread (kept alive here, so no later thread is taken for it) -> first mono ns, first UTC ns, frames so far
    streams: dict[threading.Thread, tuple[int, int, int]] = {}

    def now_ns() -> tuple[int, int]:
        thread = threading.current_thread()
        with lock:
            mono, utc, k = streams.get(thread) or (time.monotonic_ns(), time.time_ns(), 0)
            streams[thread] = (mono, utc, k + 1)
        return mono + k * period_ns, utc + k * period_ns

    with mock.patch.object(recorder, "now_ns", now_ns):
        yield


def main() -> int:
    """``python -m tests.support.steady_clock ARGS``: ``labrig ARGS`` with its recordings under the steady clock."""
    from labrig.cli import main as labrig

    with steady_clock():
        return labrig()


if __name__ == "__main__":
    raise SystemExit(main())
