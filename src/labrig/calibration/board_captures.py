"""Calibrating a device from a committed recording of the board, as ``labrig calibrate
--capture`` does.

The device and mode a calibration is bound to are the capture's own, so a board recording can only
ever calibrate the camera and mode that recorded it. Unlike the command line, the result is stored
whether it validates or not: a stored result that did not validate is never used for analysis, but
its verdict and reasons stay visible where the technician calibrated.

Qt-free; blocking (decoding and solving take seconds); may run on any thread.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, exists, or_, select

from labrig.calibration.boards import parse_board
from labrig.calibration.camera import (
    BoardNotFoundError,
    CalibrationResult,
    CalibrationThresholds,
    CaptureSource,
    calibrate_views,
    detect_views,
)
from labrig.calibration.images import load_views
from labrig.calibration.plane import plane_homography, still_plane_view
from labrig.calibration.stored import StoredCalibration, save_calibration
from labrig.capture import Mode, load_capture
from labrig.domain.recordings import RecordingPurpose
from labrig.errors import LabrigError, UsageError
from labrig.store import Store
from labrig.store.models import AttemptCapture, Capture, CaptureSession
from labrig.tasks import UNTRACKED, Share, Task

CAPTURE_LIMIT = 200  # newest committed captures offered
USABLE = ("committed", "salvaged")


class PlaneCaptureMismatchError(LabrigError):
    code = "LABRIG_PLANE_MISMATCH"


@dataclass(frozen=True)
class CaptureChoice:
    """A committed capture recorded to hold the board: moved through its poses
    (``purpose`` "board") or lying on the plane ("plane"); None for one from before recordings had
    a purpose that is in no attempt."""

    capture_id: str
    manifest_sha256: str
    device_id: str
    mode: str  # label, e.g. "1280x720@30 BGR"
    frames: int
    started_at: datetime
    subject_code: str | None  # of its session; board recordings usually have none
    purpose: str | None = None  # RecordingPurpose.BOARD or .PLANE; None: recorded before purposes

    def describe(self) -> str:
        where = f", session {self.subject_code}" if self.subject_code else ""
        return (
            f"{self.started_at.astimezone():%Y-%m-%d %H:%M} · {self.device_id} · {self.mode} · "
            f"{self.frames} frames{where} ({self.capture_id[:8]})"
        )

    def offered_as(self, purpose: RecordingPurpose) -> bool:
        """Whether to offer it as a board recording or as a plane recording."""
        return self.purpose is None or self.purpose == purpose.value


@dataclass(frozen=True)
class CalibrationOutcome:
    stored: StoredCalibration
    result: CalibrationResult
    plane: bool  # a plane homography was stored with it (outputs in mm)


def committed_captures(store: Store, limit: int = CAPTURE_LIMIT) -> list[CaptureChoice]:
    """The newest committed (or salvaged) board and plane recordings, newest first, with those
    from before recordings had a purpose that are in no attempt. Attempts are never offered."""
    board_kind = or_(
        Capture.purpose.in_([RecordingPurpose.BOARD.value, RecordingPurpose.PLANE.value]),
        and_(
            Capture.purpose.is_(None),
            ~exists().where(AttemptCapture.capture_id == Capture.id),
        ),
    )
    with store.read() as session:
        rows = session.execute(
            select(Capture, CaptureSession.subject_code)
            .outerjoin(CaptureSession, CaptureSession.id == Capture.session_id)
            .where(Capture.state.in_(USABLE), Capture.manifest_sha256.is_not(None), board_kind)
            .order_by(Capture.started_at.desc())
            .limit(limit)
        ).all()
        return [
            CaptureChoice(
                c.id,
                c.manifest_sha256 or "",
                c.device_id,
                _mode_label(c.mode),
                c.frame_count,
                c.started_at,
                subject,
                c.purpose,
            )
            for c, subject in rows
        ]


def calibrate_from_capture(
    store: Store,
    board_spec: str,
    capture: CaptureChoice,
    plane: CaptureChoice | None = None,
    every: int = 10,
    thresholds: CalibrationThresholds | None = None,
    now: datetime | None = None,
    task: Task = UNTRACKED,
) -> CalibrationOutcome:
    """Solve from every ``every``-th frame of ``capture``; store the result bound to its
    device and mode.

    ``plane``: a recording of the board lying on the measurement plane, by the same device in the
    same mode; when the result validates, its first view with the board gives the scale (mm).
    Progress goes to ``task``; a cancel stops it before anything is stored.
    """
    board = parse_board(board_spec)
    if plane is not None and (plane.device_id, plane.mode) != (capture.device_id, capture.mode):
        raise PlaneCaptureMismatchError(
            f"the plane recording is from {plane.device_id} in {plane.mode} but the board "
            f"recording from {capture.device_id} in {capture.mode}: record the board lying on the "
            "plane with the same camera and mode"
        )
    if every < 1:
        raise UsageError("use every frame (1) or a larger step")
    media = load_capture(store, capture.manifest_sha256)
    source = CaptureSource(capture.capture_id, capture.manifest_sha256, every)
    solving = Share(task, 0.0, 0.9 if plane is not None else 1.0)
    result = calibrate_views(
        load_views(list(media.segments), every),
        board,
        thresholds,
        source,
        solving,
        expected=-(-capture.frames // every),
    )
    homography = None
    if plane is not None and result.valid:
        plane_media = load_capture(store, plane.manifest_sha256)
        try:
            detections, _, _ = detect_views(
                load_views(list(plane_media.segments), every),
                board,
                Share(task, 0.9, 1.0),
                -(-plane.frames // every),
            )
        except BoardNotFoundError:
            raise BoardNotFoundError(
                f"the {board.describe()} was not found in the plane recording: lay it flat "
                "on the measurement plane, fully in view, and record it again"
            ) from None
        homography = plane_homography(result, still_plane_view(detections), board)
    task.check_cancelled()  # the last point before the store changes
    stored = save_calibration(store, result, capture.device_id, capture.mode, homography, now)
    return CalibrationOutcome(stored, result, homography is not None)


def _mode_label(raw: str) -> str:
    try:
        return Mode(**json.loads(raw)).label()
    except (TypeError, ValueError):  # a mode written by another version: show it as stored
        return raw
