"""Saving an attempt: committed captures grouped into a trial of a session, with the default
pipeline requested.

The one place that pairs :func:`~labrig.capture.sessions.create_attempt` with the default pipeline:
the Capture screen, ``labrig demo``, the self-test and the release health check all save their
attempts here, so each asks for the same analysis. Threading: every call blocks on the store (and
:func:`stop_and_save` on the recorder's commit); call them off the GUI thread.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from labrig.calibration import current_calibration
from labrig.capture import Mode, PipelineStep, Recorder, create_attempt, import_media
from labrig.capture.commit import CommitResult
from labrig.domain.recordings import RecordingPurpose
from labrig.errors import LabrigError
from labrig.jobs import JobQueue
from labrig.store import Store
from labrig.store.models import Attempt, Capture
from labrig.tasks import UNTRACKED, Task

BOARD_NOTES = {
    RecordingPurpose.BOARD: "Board recording for calibration: not analysed; pick it on the "
    "Calibration screen as the board recording.",
    RecordingPurpose.PLANE: "Plane recording for calibration: not analysed; pick it on the "
    "Calibration screen as the plane recording.",
}


@dataclass(frozen=True)
class SavedRecording:
    """A recording stopped and committed, and what it became. ``attempt_id`` is None for a board
    recording, or when its analysis could not be requested (``note`` says why)."""

    attempt_id: str | None
    number: int | None  # the attempt's number in its session
    capture_id: str
    frames: int
    dropped: int
    manifest_sha256: str
    note: str = ""  # what the technician should know (why recording ended early, why no analysis)

    @classmethod
    def committed(cls, result: CommitResult, note: str = "") -> SavedRecording:
        """A committed capture, not (yet) an attempt."""
        return cls(
            attempt_id=None,
            number=None,
            capture_id=result.capture_id,
            frames=result.frame_count,
            dropped=result.dropped_frames,
            manifest_sha256=result.manifest_sha256,
            note=note,
        )

    def as_attempt(self, queue: JobQueue, attempt_id: str, note: str) -> SavedRecording:
        """This recording as the attempt ``attempt_id``, with its number in the session."""
        with queue.store.read() as db:
            attempt = db.get(Attempt, attempt_id)
            number = attempt.number if attempt is not None else None
        return replace(self, attempt_id=attempt_id, number=number, note=note)


def attempt_pipeline(store: Store, capture_id: str) -> list[PipelineStep]:
    """The default pipeline for a capture, with the current calibration of its device
    and mode, if any."""
    with store.read() as session:
        capture = session.get(Capture, capture_id)
        assert capture is not None
        mode = Mode(**json.loads(capture.mode)).label()
        device_id = capture.device_id
    calibration = current_calibration(store, device_id, mode)
    cal = {"calibration_id": calibration.id if calibration else None}
    return [
        PipelineStep("media.qc", {}),
        PipelineStep("tracking.markers", cal, after_previous=True),
        PipelineStep("kinematics", cal, after_previous=True),
    ]


def save_attempt(
    queue: JobQueue, session_id: str, capture_ids: Sequence[str], note: str | None = None
) -> str:
    """Make committed captures an attempt of the session and request the default pipeline
    on the first of them, atomically (``attempt.created`` and its jobs in one transaction);
    the attempt's id. ``note``: why it is not a normal attempt, kept on it."""
    pipeline = attempt_pipeline(queue.store, capture_ids[0]) if capture_ids else []
    return create_attempt(queue, session_id, capture_ids, pipeline, note)


def stop_and_save(
    queue: JobQueue, recorder: Recorder, session_id: str, *, interrupted: str = ""
) -> SavedRecording:
    """Stop and commit the recording, then make it an attempt of the session, or, when it was
    recorded as a board or plane recording (``recorder.purpose``), keep it as such: not analysed
    but offered on the Calibration screen.

    ``interrupted``: why the recording was cut short by something other than Stop (the window was
    closed); the attempt is marked with it.

    A commit failure raises (the capture stays provisional; start-up recovery salvages it). A
    committed recording whose attempt is refused is still returned, with ``attempt_id`` None and the
    reason in ``note``.
    """
    result = recorder.stop()
    why = recorder.status().stop_reason
    mark = f"Interrupted: {interrupted}." if interrupted else None
    saved = SavedRecording.committed(result, why or "")
    if recorder.purpose in BOARD_NOTES:
        return replace(saved, note=BOARD_NOTES[recorder.purpose] + (f" {why}" if why else ""))
    try:
        attempt_id = save_attempt(queue, session_id, [result.capture_id], mark)
    except LabrigError as exc:
        return replace(
            saved,
            note=f"The recording is saved, but its analysis could not be requested: {exc.message}",
        )
    return saved.as_attempt(queue, attempt_id, mark or saved.note)


def import_attempt(
    queue: JobQueue, path: Path, session_id: str, task: Task = UNTRACKED
) -> SavedRecording:
    """Copy a video file into the store as a committed capture (refused when it is not media, is
    truncated or was imported before: nothing is stored then) and make it an attempt of the
    session, with its analysis requested."""
    result = import_media(queue.store, path, session_id=session_id, task=task)
    attempt_id = save_attempt(queue, session_id, [result.capture_id])
    return SavedRecording.committed(result).as_attempt(
        queue, attempt_id, f"Imported from {path.name}."
    )
