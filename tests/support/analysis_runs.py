"""Real results and calibrations for the Results and Calibration screens and their read helpers: the
virtual camera, the recorder, the queue's analysis stages and the publisher, as ``labrig demo`` runs
them, on recordings of a second or two."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import select

from labrig.bootstrap import Services
from labrig.calibration.boards import parse_board
from labrig.calibration.camera import (
    CalibrationThresholds,
    View,
    calibrate,
    detect_views,
)
from labrig.calibration.plane import plane_homography
from labrig.calibration.stored import StoredCalibration, save_calibration
from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.recorder import Recorder
from labrig.capture.sessions import create_attempt, create_session
from labrig.capture.sink import SteadyClock
from labrig.capture.sources import Mode
from labrig.capture.virtual import VIRTUAL_CAMERA_NAME, VirtualCamera
from labrig.domain.recordings import RecordingPurpose
from labrig.jobs.executor import ThreadExecutor
from labrig.pipeline.attempts import attempt_pipeline
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord, CalibrationRecord, Job, JobOutput

MODE = Mode(1280, 720, 30.0)
MARKERS = DeviceInfo("virtual:markers", DeviceKind.VIRTUAL, VIRTUAL_CAMERA_NAME, "markers")
BOARD = "chessboard:9x6:25"


def new_session(services: Services, subject: str = "S-1") -> str:
    return create_session(services.queue, subject, "reach", "ana")


def record(
    services: Services,
    session_id: str | None,
    scene: str = "markers",
    seconds: float = 1.5,
    camera: VirtualCamera | None = None,
    mode: Mode = MODE,
    purpose: RecordingPurpose = RecordingPurpose.ATTEMPT,
) -> str:
    """A committed capture of ``scene``, paced unless ``camera`` says otherwise, its frames stamped
    1/30 s apart (the scene's own time) on a steady clock: no drops or late stamps from a busy
    machine (tests/support). Recorded for ``purpose``."""
    camera = camera or VirtualCamera(scene, frames_limit=int(seconds * mode.fps))  # type: ignore[arg-type]
    recorder = Recorder(
        services.store,
        camera,
        MARKERS,
        mode,
        session_id=session_id,
        clock=SteadyClock(mode.fps),
        purpose=purpose,
    )
    recorder.start()
    recorder.wait(60)
    return recorder.stop().capture_id


def request_analysis(services: Services, session_id: str, capture_id: str) -> str:
    """Create the attempt with the default pipeline (its jobs queued, nothing run); the
    attempt id."""
    return create_attempt(
        services.queue, session_id, [capture_id], attempt_pipeline(services.store, capture_id)
    )


def run_analysis(services: Services) -> None:
    """Run every queued stage to the end, then let the publisher write the results."""
    ThreadExecutor(services.queue, workers=2).run(drain=True)
    services.dispatcher.dispatch_once()


def analyse(services: Services, session_id: str, capture_id: str) -> str:
    """Create the attempt, run its stages to the end, and let the publisher write its
    result; the attempt id."""
    attempt_id = request_analysis(services, session_id, capture_id)
    run_analysis(services)
    return attempt_id


def stage_output(services: Services, attempt_id: str, stage_id: str) -> dict[str, Any]:
    """The committed output of the attempt's ``stage_id`` job, as the stage wrote it."""
    with services.store.read() as session:
        key = session.scalar(
            select(Job.idempotency_key).where(
                Job.attempt_id == attempt_id, Job.stage_id == stage_id
            )
        )
        body = session.scalar(select(JobOutput.body).where(JobOutput.idempotency_key == key))
    assert body is not None, f"{stage_id} committed no output"
    return json.loads(body)  # type: ignore[no-any-return]


def newest_result(store: Store, attempt_id: str) -> AnalysisResultRecord:
    """The attempt's newest result (published or blocked); fails the test when there is none."""
    with store.read() as session:
        row = session.scalars(
            select(AnalysisResultRecord)
            .where(AnalysisResultRecord.attempt_id == attempt_id)
            .order_by(AnalysisResultRecord.created_at.desc())
        ).first()
    assert row is not None, "no result was published"
    return row


def board_views(mode: Mode, every: int = 30) -> list[View]:
    camera = VirtualCamera("board", noise=1.0)
    camera.open(mode)
    return [View(f"board-{i}", camera.render(i)) for i in range(0, 600, every)]


def calibrate_markers_camera(
    services: Services,
    mode: Mode = MODE,
    *,
    reject_one: bool = False,
    thresholds: CalibrationThresholds | None = None,
    plane: bool = True,
    now: datetime | None = None,
) -> StoredCalibration:
    """Calibrate the virtual camera from its board scene and store it bound to the markers
    device in ``mode``.

    ``reject_one``: one view's corners are moved by about 3 px, as a mis-detection would, so the
    solve rejects it.
    """
    board = parse_board(BOARD)
    detections, skipped, size = detect_views(board_views(mode), board)
    if reject_one:
        noisy = detections[3].corners + np.random.default_rng(1).normal(
            0, 3, detections[3].corners.shape
        )
        detections[3] = dataclasses.replace(detections[3], corners=noisy)
    result = calibrate(detections, size, board, thresholds, skipped)
    homography = None
    if plane:
        camera = VirtualCamera("plane", noise=1.0)
        camera.open(mode)
        [on_plane], _, _ = detect_views([View("plane", camera.render(0))], board)
        homography = plane_homography(result, on_plane, board)
    return save_calibration(
        services.store, result, MARKERS.device_id, mode.label(), homography, now
    )


class BoardPosesCamera(VirtualCamera):
    """The board scene's 20 s of poses, one in every 30 frames, delivered as consecutive frames and
    unpaced: a board recording that holds 20 distinct poses in 20 frames."""

    def render(self, frame_index: int) -> np.ndarray:  # type: ignore[type-arg]
        return super().render(frame_index * 30)


def record_board(services: Services, mode: Mode, scene: str = "board", frames: int = 20) -> str:
    """A committed recording of the board moving through its poses (or, scene "plane",
    lying on the plane)."""
    camera = BoardPosesCamera(scene, paced=False, noise=1.0, frames_limit=frames)  # type: ignore[arg-type]
    purpose = RecordingPurpose.PLANE if scene == "plane" else RecordingPurpose.BOARD
    return record(services, None, camera=camera, mode=mode, purpose=purpose)


def store_as_v1(store: Store, calibration_id: str) -> str:
    """Rewrite a stored calibration as Labrig stored it before ``labrig.calibration/2`` (no
    corners, no source; its id the digest of that document), as a catalog upgraded from that
    version holds it; the v1 id."""
    with store.write() as session:
        row = session.get(CalibrationRecord, calibration_id)
        assert row is not None
        doc = json.loads(row.document)
        doc["schema"] = "labrig.calibration/1"
        del doc["source"]
        for view in doc["views"] + doc["rejected"]:
            del view["ids"], view["corners"], view["order"]
        text = json.dumps(doc, sort_keys=True)
        v1_id = hashlib.sha256(text.encode()).hexdigest()
        session.add(
            CalibrationRecord(
                id=v1_id,
                device_id=row.device_id,
                mode=row.mode,
                valid=row.valid,
                rms_px=row.rms_px,
                document=text,
                plane_homography=row.plane_homography,
                created_at=row.created_at,
                valid_until=row.valid_until,
            )
        )
        session.delete(row)
    return v1_id
