"""The release health check's rig part: the virtual rig's ground truth against what Labrig
measures of it.

* **Recorded sync**: two virtual rig cameras, the second told to expose 4 ms after the first, and
  the force plate, recorded as a rig for a second and a half: the spread of the frame sets is the
  4 ms the cameras were given, and the plate delivers its 1 kHz with no sample lost.
* **Post-hoc sync**: three rendered videos of the flash scene, started at known instants with no
  clock shared: the offsets the flash gives are the true ones within half a frame.

Both are timed by the virtual devices' own clocks, so a busy machine slows the check but cannot
fail it.
"""

from __future__ import annotations

import time
from pathlib import Path

from labrig.bootstrap import Services
from labrig.capture import create_session
from labrig.capture.posthoc_sync import estimate_offsets
from labrig.capture.rig_camera import CameraTiming, VirtualRig
from labrig.capture.rigs import DeviceSpec
from labrig.capture.sources import Mode
from labrig.releases import Check
from labrig.scenarios.rig_videos import VIDEO_MODE, write_rig_videos

OFFSET_MS = 4.0
STARTS_S = (0.0, 0.4137, 0.9021)  # when each post-hoc camera started, world seconds
SMALL = Mode(640, 360, 30.0, "any")


def rig_checks(services: Services, scratch: Path) -> list[Check]:
    return [*_recorded(services), *_posthoc(scratch)]


def _recorded(services: Services) -> list[Check]:
    services.capture.virtual_rig = VirtualRig(timing={1: CameraTiming(offset_ms=OFFSET_MS)})
    services.capture.add_rig(
        "health",
        [
            DeviceSpec("virtual:rig-1", SMALL, "front"),
            DeviceSpec("virtual:rig-2", SMALL, "right"),
            DeviceSpec("virtual:plate-1"),
        ],
    )
    session = create_session(services.queue, "HEALTH-RIG", "reference", "labrig")
    recording = services.capture.start_rig_recording("health", session, planned_seconds=5)
    deadline = time.monotonic() + 60
    # a second and a half of frames, however slowly a busy machine delivers them
    while min(c.status.frames for c in recording.status().cameras) < 45:
        if time.monotonic() > deadline or recording.all_stopped():
            break
        recording.wait(0.1)
    result = recording.stop()
    sync = result.sync
    spread = sync.spread_ms["p50"] if sync is not None and sync.spread_ms else -1.0
    plate = (sync.instruments.get("plate") if sync is not None else None) or {}
    rate = float(plate.get("rate_hz") or 0.0)
    return [
        Check(
            "rig sync spread p50 (ms)", spread, OFFSET_MS, "±0.5 ms", abs(spread - OFFSET_MS) <= 0.5
        ),
        Check("force plate rate (Hz)", rate, 1000.0, "±1 Hz", abs(rate - 1000.0) <= 1.0),
        Check(
            "force plate samples lost",
            float(plate.get("lost", -1)),
            0.0,
            "none",
            plate.get("lost") == 0,
        ),
    ]


def _posthoc(scratch: Path) -> list[Check]:
    videos = write_rig_videos(scratch / "posthoc", STARTS_S, 2.5, scene="flash")
    found = estimate_offsets(
        [(f"camera {k + 1}", p, VIDEO_MODE.fps) for k, p in enumerate(videos)], "flash"
    )
    half_frame = 0.5 / VIDEO_MODE.fps
    checks = []
    for k, camera in enumerate(found.cameras[1:], start=1):
        truth = STARTS_S[k] - STARTS_S[0]
        checks.append(
            Check(
                f"post-hoc flash offset, camera {k + 1} (ms)",
                camera.offset_s * 1e3,
                truth * 1e3,
                "±half a frame",
                abs(camera.offset_s - truth) <= half_frame and camera.trustworthy,
            )
        )
    return checks
