"""What a recording is for, chosen by the technician before Record and stored on its capture; what
an attempt's note makes of it in a list; and the limits of a rig recording's sync gate."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any


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

#: A rig recording's purpose is kept at the head of its attempt's note (its captures are the rig's
#: cameras, each an attempt's): a board or floor board recording is kept for rig calibration and
#: not analysed. The words are stored, so they stay as they are.
RIG_PURPOSE_NOTES = {
    RecordingPurpose.BOARD: "Board recording for rig calibration: not analysed; calibrate the rig "
    "from it with 'labrig calibrate-rig --capture-attempt ID'.",
    RecordingPurpose.PLANE: "Floor board recording for rig calibration: not analysed; give it "
    "to 'labrig calibrate-rig' as --floor-attempt ID to set the world's origin and axes.",
}

RIG_PURPOSE_LABELS = {  # short: the Capture screen says more under the choice
    RecordingPurpose.ATTEMPT: "An attempt (analysed)",
    RecordingPurpose.BOARD: "The board, carried through the volume",
    RecordingPurpose.PLANE: "The board lying on the floor",
}


def rig_recording_purpose(note: str | None) -> RecordingPurpose:
    """What a rig recording was for, from its attempt's note."""
    for purpose, words in RIG_PURPOSE_NOTES.items():
        if note and note.startswith(words):
            return purpose
    return RecordingPurpose.ATTEMPT


def attempt_label(note: str | None) -> str:
    """What an attempt's note makes of it in a list: "board recording" (kept for rig
    calibration, not analysed), "interrupted", or nothing."""
    if rig_recording_purpose(note) is not RecordingPurpose.ATTEMPT:
        return "board recording"
    return "interrupted" if note and "Interrupted" in note else ""


#: the sync quality gate's limits for a rig's recording (``labrig.capture.rig_sync.judge_sync``),
#: the defaults of the rig.sync stage's settings
SYNC_DEFAULTS: Mapping[str, Any] = {
    "max_spread_fraction": 0.25,  # of the frame interval, at p99: above it, degraded
    "max_unmatched_fraction": 0.01,  # of the instants, per camera: above it, degraded
    "min_matched_fraction": 0.5,  # of the instants forming frame sets: below it, blocked
    "offsets_ms": None,  # post-hoc sync's offsets for videos with no shared clock
    "trusted": True,  # whether those offsets are trustworthy
}
