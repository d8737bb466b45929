"""Saving a rig recording as one attempt: all its committed captures, its sync figures and how each
device ended, in one transaction, with the rig pipeline requested (rig.sync, then the default
pipeline on the first camera)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.calibration import current_rig_calibration, rig_calibrations
from labrig.capture import PipelineStep, create_attempt
from labrig.capture.commit import CommitResult
from labrig.capture.recorder import provisional_root
from labrig.capture.recovery import RIG_UNSAVED
from labrig.capture.rig_recorder import RigCaptureOutcome, RigResult, sync_of
from labrig.capture.rig_recorder import RigRecording as RigRecorder
from labrig.capture.rigs import Rig, RigNotFoundError, get_rig
from labrig.domain.recordings import RIG_PURPOSE_NOTES, RecordingPurpose
from labrig.errors import LabrigError
from labrig.jobs import JobQueue
from labrig.pipeline.attempts import SavedRecording, attempt_pipeline
from labrig.store.models import Capture, RigRecording


class RigNotSavedError(LabrigError):
    """No device of the rig recording committed a frame: there is nothing to make an attempt of."""

    code = "LABRIG_RIG_NOTHING_RECORDED"


def stop_and_save_rig(
    queue: JobQueue,
    recording: RigRecorder,
    interrupted: str = "",
    purpose: RecordingPurpose = RecordingPurpose.ATTEMPT,
) -> SavedRecording:
    """Stop the rig recording and save it as one attempt (:func:`save_rig_attempt`), as the
    Capture screen shows it: frames and drops summed over the cameras, the first camera's
    capture, and the sync in the note. Refused (:class:`RigNotSavedError`) when no camera
    recorded a frame; a commit that fails leaves its capture to recovery."""
    result = recording.stop()
    attempt_id = save_rig_attempt(queue, result, interrupted, purpose)
    committed, cameras = result.committed, result.cameras
    first = committed[0].commit
    assert first is not None
    sync = result.sync.summary() if result.sync else "one camera: no sync to measure"
    instruments = len(committed) - len(cameras)
    with_instruments = f" and {instruments} instrument{'s' * (instruments > 1)}" * (instruments > 0)
    note = f"{len(cameras)} cameras{with_instruments}; sync {sync}." + (
        f" {result.note}" if result.note else ""
    )
    if purpose in RIG_PURPOSE_NOTES:
        note = f"{RIG_SCREEN_NOTES[purpose]} {note}"
    saved = SavedRecording(
        attempt_id=None,
        number=None,
        capture_id=first.capture_id,
        frames=sum(c.commit.frame_count for c in cameras if c.commit),
        dropped=sum(c.commit.dropped_frames for c in cameras if c.commit),
        manifest_sha256=first.manifest_sha256,
    )
    return saved.as_attempt(queue, attempt_id, note)


def rig_pipeline(
    queue: JobQueue,
    capture_ids: list[str],
    sync_config: dict[str, Any] | None = None,
    rig: Rig | None = None,
) -> list[PipelineStep]:
    """rig.sync over every capture (two or more; ``sync_config``: its settings, a post-hoc
    sync's offsets), then the default pipeline after it; or, for a ``rig`` of two or more cameras
    that has ever been calibrated as a rig, the 3-D pipeline under its current rig calibration
    (none current: the 3-D stages are blocked and say to calibrate again)."""
    steps = attempt_pipeline(queue.store, capture_ids[0])
    if len(capture_ids) < 2:
        return steps
    sync = PipelineStep("rig.sync", dict(sync_config or {}))
    cameras = [d for d in rig.devices if not d.instrument] if rig is not None else []
    if rig is None or len(cameras) < 2 or not rig_calibrations(queue.store, rig.name):
        return [sync, replace(steps[0], after_previous=True), *steps[1:]]
    current = current_rig_calibration(queue.store, rig)
    cal = {"rig_calibration_id": current.id if current else None}
    offsets = {"offsets_ms": (sync_config or {}).get("offsets_ms")}
    return [
        sync,
        PipelineStep("media.qc", {"every_camera": True}, after_previous=True),
        PipelineStep("tracking.rig", cal, after_previous=True),
        PipelineStep("reconstruction.3d", offsets, after_previous=True),
        PipelineStep("kinematics.3d", {}, after_previous=True),
    ]


RIG_SCREEN_NOTES = {
    RecordingPurpose.BOARD: "Kept for rig calibration, not analysed: calibrate the rig from it on "
    "Calibration ▸ A rig.",
    RecordingPurpose.PLANE: "Kept for rig calibration, not analysed: on Calibration ▸ A rig, pick "
    "it as the floor recording to set the world's origin and axes.",
}


def save_rig_attempt(
    queue: JobQueue,
    result: RigResult,
    interrupted: str = "",
    purpose: RecordingPurpose = RecordingPurpose.ATTEMPT,
) -> str:
    """Make ``result``'s committed captures one attempt of its session, and store the rig
    recording's outcome with it; the attempt's id. ``interrupted``: why the recording ended
    other than by Stop (a crash), marked on the attempt. ``purpose``: a board (or floor board)
    recording for rig calibration is kept as an attempt, for calibrate-rig to read, but not
    analysed."""
    captures = result.committed_ids
    if not captures:
        _mark(queue, result, "failed")
        raise RigNotSavedError(
            f"no device of the rig '{result.rig}' recorded a frame: nothing was saved as an "
            f"attempt. {result.note or ''} Check the devices and record again".replace("  ", " ")
        )
    parts = [
        RIG_PURPOSE_NOTES.get(purpose, ""),
        f"Interrupted: {interrupted}." if interrupted else "",
        result.note,
    ]
    note = " ".join(p for p in parts if p) or None

    def within(db: Session, attempt_id: str) -> None:
        _write_outcome(db, result, "interrupted" if interrupted else "saved", attempt_id)

    rig = _rig_named(queue, result.rig)
    pipeline = [] if purpose in RIG_PURPOSE_NOTES else rig_pipeline(queue, captures, rig=rig)
    return create_attempt(queue, result.session_id, captures, pipeline, note, within)


def _rig_named(queue: JobQueue, name: str) -> Rig | None:
    """The rig as it is now (None when it has been deleted since it recorded)."""
    try:
        return get_rig(queue.store, name)
    except RigNotFoundError:
        return None


def _write_outcome(db: Session, result: RigResult, state: str, attempt_id: str | None) -> None:
    row = db.get(RigRecording, result.recording_id)
    if row is None:
        return
    row.state, row.attempt_id = state, attempt_id
    row.devices = json.dumps([c.to_json() for c in result.captures])
    row.sync = json.dumps(result.sync.to_json()) if result.sync else None


def _mark(queue: JobQueue, result: RigResult, state: str) -> None:
    with queue.store.write() as db:
        _write_outcome(db, result, state, None)


INTERRUPTED = "Labrig stopped while the rig was recording (a crash, a kill or a power cut)"


@dataclass(frozen=True)
class RigRecovered:
    """A rig recording a crash interrupted, made an attempt of what was salvaged (or not)."""

    recording_id: str
    rig: str
    attempt_id: str | None
    frames: int
    detail: str


def save_interrupted_rigs(queue: JobQueue) -> list[RigRecovered]:
    """Each rig recording a crash left unsaved, made one attempt of its captures once recovery
    has committed or salvaged every one of them (:func:`labrig.capture.recover` first), marked
    interrupted; a recording whose captures are still provisional (being recorded by another
    process, or not recovered yet) is left for later."""
    with queue.store.read() as db:
        rows = list(db.scalars(select(RigRecording).where(RIG_UNSAVED)))
        pending = []
        for row in rows:
            devices = json.loads(row.devices)
            captures = [db.get(Capture, d["capture_id"]) for d in devices]
            if any(c is not None and c.state == "provisional" for c in captures):
                continue
            # a folder recovery left is being recorded (its lock is held) or is left for later
            if any((provisional_root(queue.store) / d["capture_id"]).exists() for d in devices):
                continue
            outcomes = [
                RigCaptureOutcome(
                    d["place"],
                    d["device_id"],
                    d["mode"],
                    d["capture_id"],
                    _commit_of(c),
                    None,
                    None if c is not None else "not catalogued: it never began recording",
                    d.get("kind") == "instrument",
                )
                for d, c in zip(devices, captures, strict=True)
            ]
            pending.append((row.id, row.rig_name, row.session_id, outcomes))
    out = []
    for recording_id, rig, session_id, outcomes in pending:
        result = RigResult(recording_id, rig, session_id, outcomes, sync_of(queue.store, outcomes))
        usable = result.committed
        frames = sum(o.commit.frame_count for o in usable if o.commit)
        try:
            attempt_id = save_rig_attempt(queue, result, interrupted=INTERRUPTED)
        except RigNotSavedError as exc:
            out.append(RigRecovered(recording_id, rig, None, 0, exc.message))
            continue
        out.append(
            RigRecovered(
                recording_id,
                rig,
                attempt_id,
                frames,
                f"the rig '{rig}' recording became an attempt of its {len(usable)} salvaged "
                "captures, marked interrupted",
            )
        )
    return out


def _commit_of(capture: Capture | None) -> CommitResult | None:
    if capture is None or capture.state not in ("committed", "salvaged"):
        return None
    if not capture.manifest_sha256:
        return None
    return CommitResult(
        capture.id,
        capture.state,
        capture.manifest_sha256,
        capture.frame_count,
        capture.dropped_frames,
        0,
    )
