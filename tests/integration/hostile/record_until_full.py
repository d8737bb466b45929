"""A recording that the disk fills under, for the full-disk tests: records the virtual camera into
STORE (its storage monitor off, as on a disk too small for the forecast to matter), touches GO once
frames are flowing so the test fills the disk, and prints how the recording ended."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from labrig.capture.recorder import Recorder
from labrig.capture.sources import Mode
from labrig.capture.virtual import VirtualCamera
from labrig.errors import LabrigError
from labrig.store import open_store
from tests.integration.recording.conftest import VIRTUAL


def main() -> None:
    store = open_store(sys.argv[1])
    recorder = Recorder(
        store, VirtualCamera("markers"), VIRTUAL, Mode(320, 240, 30.0), segment_seconds=0.25
    )
    recorder.start()
    deadline = time.monotonic() + 60  # never outlive the test
    while recorder.status().frames < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    Path(sys.argv[2]).touch()
    while not recorder.status().stop_reason and time.monotonic() < deadline:
        time.sleep(0.01)
    print(f"stop reason: {recorder.status().stop_reason}", flush=True)
    try:
        recorder.stop()
    except LabrigError as exc:
        print(f"stopped: {exc.code}: {exc.message}", flush=True)
    else:
        print("committed", flush=True)


if __name__ == "__main__":
    main()
