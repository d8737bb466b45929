"""When a capture's frame times are known: kinematics is in seconds then, in frames only without."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from labrig.capture.media import CaptureMedia


def _media(fps: float | None, stamps: tuple[Path | None, ...]) -> CaptureMedia:
    mode = {"width": 640, "height": 480} | ({"fps": fps} if fps is not None else {})
    return CaptureMedia("c", "d", mode, 4, 0, tuple(Path("x.avi") for _ in stamps), stamps)


def test_frame_times_are_known_from_stamps_or_a_frame_rate_and_unknown_without_either() -> None:
    assert _media(30.0, (Path("t.csv"),)).timed  # a recording
    assert _media(None, (Path("t.csv"),)).timed  # stamps, whatever the header says
    imported = _media(25.0, (None,))  # a file imported with its header's frame rate
    assert imported.timed and np.allclose(imported.times_s(), np.arange(4) / 25.0)
    assert not _media(0.0, (None,)).timed  # a header with no frame rate, and no stamps
    assert not _media(None, (None, Path("t.csv"))).timed
