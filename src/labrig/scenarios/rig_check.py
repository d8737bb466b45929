"""The release health check's rig part: the virtual rig's ground truth against what Labrig
measures of it.

* **Recorded sync**: two virtual rig cameras, the second told to expose 4 ms after the first, and
  the force plate, recorded as a rig for a second and a half: the spread of the frame sets is the
  4 ms the cameras were given, and the plate delivers its 1 kHz with no sample lost.
* **Post-hoc sync**: three rendered videos of the flash scene, started at known instants with no
  clock shared: the offsets the flash gives are the true ones within half a frame.

* **3-D reconstruction**: the built-in virtual rig's four cameras recorded for three seconds at
  1280×720 under a rig calibration holding their true lenses and poses
  (:mod:`labrig.scenarios.rig_truth`), analysed by the 3-D stages: every marker found, within
  0.5 mm RMS of its true path, and the steady marker's peak speed within 1 % of its true
  628.3 mm/s. The true cameras keep a calibration's own error out of it: what is checked is the
  release's tracking, matching, triangulation and kinematics.

All are timed by the virtual devices' own clocks, so a busy machine slows the check but cannot
fail it.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select

from labrig.bootstrap import Services
from labrig.capture import create_session
from labrig.capture.posthoc_sync import estimate_offsets
from labrig.capture.rig_camera import CameraTiming, VirtualRig
from labrig.capture.rig_recorder import RigResult
from labrig.capture.rigs import VIRTUAL_RIG, DeviceSpec, get_rig
from labrig.capture.sources import Mode
from labrig.jobs import ThreadExecutor
from labrig.pipeline import save_rig_attempt
from labrig.releases import Check
from labrig.scenarios.rig_truth import errors_mm, matched, store_truth_calibration, true_paths
from labrig.scenarios.rig_videos import VIDEO_MODE, write_rig_videos
from labrig.store.models import AnalysisResultRecord, Job, JobOutput

OFFSET_MS = 4.0
STARTS_S = (0.0, 0.4137, 0.9021)  # when each post-hoc camera started, world seconds
SMALL = Mode(640, 360, 30.0, "any")


def rig_checks(services: Services, scratch: Path) -> list[Check]:
    return [*_reconstructed(services), *_recorded(services), *_posthoc(scratch)]


STEADY_SPEED = 2 * math.pi * 800 / 8  # mm/s: the steady marker's circle (rig_world.MARKER_PATHS)
RMSE_MM, SPEED_REL = 0.5, 0.01


def _record(services: Services, rig: str, session: str, frames: int) -> RigResult:
    recording = services.capture.start_rig_recording(rig, session, planned_seconds=5)
    deadline = time.monotonic() + 60
    # this many frames, however slowly a busy machine delivers them
    while min(c.status.frames for c in recording.status().cameras) < frames:
        if time.monotonic() > deadline or recording.all_stopped():
            break
        recording.wait(0.1)
    return recording.stop()


def _reconstructed(services: Services) -> list[Check]:
    services.capture.virtual_rig = VirtualRig()
    rig = get_rig(services.store, VIRTUAL_RIG)
    store_truth_calibration(services.store, rig)
    session = create_session(services.queue, "HEALTH-3D", "reference", "labrig")
    result = _record(services, rig.name, session, 90)
    attempt_id = save_rig_attempt(services.queue, result)
    ThreadExecutor(services.queue, workers=2).run(drain=True)
    services.dispatcher.dispatch_all()
    with services.store.read() as db:
        row = db.scalars(
            select(JobOutput.body)
            .join(Job, Job.idempotency_key == JobOutput.idempotency_key)
            .where(Job.attempt_id == attempt_id, Job.stage_id == "reconstruction.3d")
        ).first()
        published = db.scalars(
            select(AnalysisResultRecord).where(AnalysisResultRecord.attempt_id == attempt_id)
        ).first()
    if row is None or published is None:
        return [Check("3-D markers reconstructed", 0.0, 4.0, "all 4", False)]
    first = next(c.commit for c in result.captures if c.commit is not None)
    truth = true_paths(services.store, services.capture.virtual_rig, first.manifest_sha256)
    errors = errors_mm(json.loads(row)["reconstruction"], truth)
    every = np.concatenate(list(errors.values())) if errors else np.zeros(0)
    rmse = float(np.sqrt(np.mean(every**2))) if len(every) else float("inf")
    document = json.loads(published.document)
    steady = _steady_peak(json.loads(row)["reconstruction"], document, truth)
    return [
        Check("3-D markers reconstructed", float(len(errors)), 4.0, "all 4", len(errors) == 4),
        Check("3-D marker RMSE (mm)", rmse, 0.0, f"≤ {RMSE_MM} mm", rmse <= RMSE_MM),
        Check(
            "3-D steady marker peak speed (mm/s)",
            steady,
            STEADY_SPEED,
            "±1 %",
            abs(steady / STEADY_SPEED - 1) <= SPEED_REL,
        ),
    ]


def _steady_peak(
    reconstruction: dict[str, Any], document: dict[str, Any], truth: np.ndarray
) -> float:
    """The peak speed the result gives the marker that follows the steady one (true index 0)."""
    found = matched(reconstruction, truth).get(0)
    if found is None:
        return 0.0
    metric = next(x for x in document["metrics"] if x["track_id"] == found[0])
    return float(metric["peak_speed"] or 0.0)


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
    result = _record(services, "health", session, 45)  # a second and a half
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
