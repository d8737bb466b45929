"""A recording process for the crash tests: records the virtual camera, optionally killing itself.

``--kill-at-rename K`` sends SIGKILL to this process right after the K-th file rename
(manifest rewrites, moves into the media store); ``--kill-at-cleanup`` right after the
database commit, as the provisional folder is removed. The hook is Python's audit hook,
outside Labrig's code. ``--report-renames`` prints ``rename K`` after each rename, so a test
knows when a segment has been closed: rename 1 writes the first manifest (before ``started``),
each later one while recording rewrites it for a closed segment.

It records ``--frames N`` frames when given (the same recording however loaded the machine
is: segments close by frame count), else ``--seconds``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from typing import Any

from labrig.capture.recorder import Recorder
from labrig.capture.sources import Mode
from labrig.capture.virtual import VirtualCamera
from labrig.store import open_store
from tests.integration.recording.conftest import VIRTUAL


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--frames", type=int, default=0)
    parser.add_argument("--report-renames", action="store_true")
    parser.add_argument("--kill-at-rename", type=int, default=0)
    parser.add_argument("--kill-at-cleanup", action="store_true")
    args = parser.parse_args()
    renames = [0]

    def hook(event: str, _args: tuple[Any, ...]) -> None:
        if event == "os.rename":
            renames[0] += 1
            if renames[0] == args.kill_at_rename:
                os.kill(os.getpid(), signal.SIGKILL)
            if args.report_renames:
                print(f"rename {renames[0]}", flush=True)
        elif event == "shutil.rmtree" and args.kill_at_cleanup:
            os.kill(os.getpid(), signal.SIGKILL)

    store = open_store(args.store)
    sys.addaudithook(hook)
    recorder = Recorder(
        store, VirtualCamera("markers"), VIRTUAL, Mode(320, 240, 30.0), segment_seconds=0.25
    )
    recorder.start()
    print("started", flush=True)
    if args.frames:
        deadline = time.monotonic() + 60  # never outlive the test
        while recorder.status().frames < args.frames and not recorder.status().stop_reason:
            assert time.monotonic() < deadline, f"{args.frames} frames were not recorded in 60 s"
            time.sleep(0.002)
    else:
        recorder.wait(args.seconds)
    recorder.stop()
    print(f"renames {renames[0]}", flush=True)


if __name__ == "__main__":
    main()
