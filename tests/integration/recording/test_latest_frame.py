"""The recorder's newest frame, for a live preview that does not open the device a second time."""

from __future__ import annotations

import threading

import numpy as np

from labrig.capture.recorder import Recorder
from labrig.capture.virtual import VirtualCamera
from labrig.store import Store
from tests.integration.recording.conftest import SMALL, VIRTUAL


def test_latest_frame_follows_the_recording_and_ends_with_it(store: Store) -> None:
    recorder = Recorder(store, VirtualCamera("markers"), VIRTUAL, SMALL, segment_seconds=10)
    assert recorder.latest_frame() is None  # nothing grabbed yet, and no waiting asked for
    recorder.start()
    first = recorder.latest_frame(0, timeout_s=2.0)
    assert first is not None
    number, image = first
    assert number >= 1 and image.shape == (SMALL.height, SMALL.width, 3) and image.dtype == np.uint8
    newer = recorder.latest_frame(number, timeout_s=2.0)
    # the markers move
    assert newer is not None and newer[0] > number and not np.array_equal(newer[1], image)

    result = recorder.stop()
    last = recorder.latest_frame(0)
    assert last is not None and last[0] >= result.frame_count  # every frame written was grabbed
    # ended: returns at once, nothing newer
    assert recorder.latest_frame(last[0], timeout_s=5.0) is None


def test_a_waiting_reader_is_woken_when_recording_stops(store: Store) -> None:
    recorder = Recorder(store, VirtualCamera("markers"), VIRTUAL, SMALL, segment_seconds=10)
    recorder.start()
    got: list[object] = []
    reader = threading.Thread(
        target=lambda: got.append(recorder.latest_frame(10**9, timeout_s=30.0))
    )
    reader.start()
    recorder.wait(0.2)
    recorder.stop()
    reader.join(timeout=5.0)
    assert not reader.is_alive() and got == [None]
