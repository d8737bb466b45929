"""Recording test parts: the virtual camera as a device, and a few real-world misbehaviours."""

from __future__ import annotations

import time

from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.recorder import Recorder
from labrig.capture.sink import SegmentSink, SinkError
from labrig.capture.sources import Image, Mode
from labrig.capture.virtual import VirtualCamera

VIRTUAL = DeviceInfo("virtual:markers", DeviceKind.VIRTUAL, "Labrig virtual camera", "markers")
SMALL = Mode(640, 480, 30.0)


class StallingCamera(VirtualCamera):
    """A camera whose driver stalls now and then (USB bandwidth, a busy hub): no frame
    arrives during a stall."""

    def __init__(self, stall_every: int, stall_s: float) -> None:
        super().__init__("markers")
        self.stall_every, self.stall_s = stall_every, stall_s

    def read(self, timeout_s: float = 2.0) -> Image | None:
        image = super().read(timeout_s)
        if self.frame_index % self.stall_every == 0:
            time.sleep(self.stall_s)
        return image


class FailingSink(SegmentSink):
    """A sink whose disk fails after ``fail_after`` frames (a write failure injected at the
    sink)."""

    fail_after = 20

    def append(
        self, image: Image, mono_ns: int, utc_ns: int, device: tuple[int, int] | None = None
    ) -> None:
        self.fail_after -= 1
        if self.fail_after < 0:
            raise SinkError(
                "writing to the data folder failed (No space left on device); recording stopped, "
                "frames so far are kept"
            )
        super().append(image, mono_ns, utc_ns, device)


def wait_for_frames(recorder: Recorder, frames: int, timeout_s: float = 60.0) -> None:
    """Until ``recorder`` has written ``frames``: a recording of a length in frames, not in
    wall-clock seconds (a busy machine gets the camera's frames later, never fewer of them)."""
    deadline = time.monotonic() + timeout_s
    while recorder.status().frames < frames:
        assert not recorder.status().stop_reason, recorder.status().stop_reason
        assert time.monotonic() < deadline, (
            f"{recorder.status().frames} of {frames} frames recorded in {timeout_s} s"
        )
        time.sleep(0.01)
