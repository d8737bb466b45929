"""What a recording is for, chosen by the technician before Record and stored on its capture."""

from __future__ import annotations

from enum import StrEnum


class RecordingPurpose(StrEnum):
    """``attempt``: a trial of the session, analysed. ``board``: the calibration board held up and
    moved through its poses. ``plane``: the board lying still on the measurement plane, for the
    scale (mm). Board and plane recordings are not analysed; the Calibration screen offers them."""

    ATTEMPT = "attempt"
    BOARD = "board"
    PLANE = "plane"

    @property
    def label(self) -> str:
        return PURPOSE_LABELS[self]


PURPOSE_LABELS = {
    RecordingPurpose.ATTEMPT: "An attempt (analysed)",
    RecordingPurpose.BOARD: "The calibration board, moved through its poses",
    RecordingPurpose.PLANE: "The board lying still on the measurement plane",
}
