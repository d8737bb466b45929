"""The technician's capture steps as plain calls on the core services (no Qt here).

They are the calls ``labrig demo`` makes for an attempt, in the same order, so
the GUI adds no capture logic of its own. Threading: the ``save_*`` calls block
(join the recorder, hash and commit the media); run them off the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from labrig.analysis.results import attempt_pipeline
from labrig.bootstrap import Services
from labrig.capture.recorder import Recorder
from labrig.capture.sessions import create_attempt
from labrig.errors import LabrigError
from labrig.store.models import Attempt
from labrig.ui.attempts_model import AttemptRow


@dataclass(frozen=True)
class SessionInfo:
    """The open session as the technician typed it (already accepted by ``create_session``)."""

    id: str
    subject_code: str
    protocol: str
    operator: str

    def label(self) -> str:
        return f"Session {self.subject_code} · {self.protocol} · {self.operator}"


def save_recording(services: Services, recorder: Recorder, session_id: str, board: bool) -> AttemptRow:
    """Stop and commit the recording: an attempt of the session, or (``board``) a recording of the calibration
    board, which is not analysed."""
    return save_board_recording(recorder) if board else save_attempt(services, recorder, session_id)


def save_board_recording(recorder: Recorder) -> AttemptRow:
    """Stop and commit a recording of the calibration board: no attempt, nothing analysed. It is offered on the
    Calibration screen, as every committed recording is."""
    result = recorder.stop()
    why = recorder.status().stop_reason
    note = ("Board recording for calibration: not analysed; pick it on the Calibration screen."
            + (f" {why}" if why else ""))
    return AttemptRow(None, None, result.capture_id, result.frame_count, result.dropped_frames,
                      result.manifest_sha256, note)


def save_attempt(services: Services, recorder: Recorder, session_id: str) -> AttemptRow:
    """Stop and commit the recording, then make it an attempt of the session, which requests its analysis.

    A commit failure raises (the capture stays provisional; start-up recovery salvages it). A committed
    recording whose attempt is refused is still returned, with ``attempt_id`` None and the reason in ``note``.
    """
    result = recorder.stop()
    note = recorder.status().stop_reason
    try:
        attempt_id = create_attempt(services.queue, session_id, [result.capture_id],
                                    attempt_pipeline(services.store, result.capture_id))
    except LabrigError as exc:
        return AttemptRow(None, None, result.capture_id, result.frame_count, result.dropped_frames,
                          result.manifest_sha256,
                          f"The recording is saved, but its analysis could not be requested: {exc.message}")
    with services.store.read() as db:
        attempt = db.get(Attempt, attempt_id)
        number = attempt.number if attempt is not None else None
    return AttemptRow(attempt_id, number, result.capture_id, result.frame_count, result.dropped_frames,
                      result.manifest_sha256, note)
