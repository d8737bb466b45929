"""``labrig demo --rig virtual``: the product end to end on the virtual rig's four cameras.

Record the calibration board moved through the volume and the board lying on the floor, calibrate
the rig from those recordings (each camera's lens, the poses together, the floor as the world's
origin and axes), record attempts of the moving markers and analyse them in 3-D through the queue
(rig.sync → media.qc → tracking.rig → reconstruction.3d → kinematics.3d).

The thresholds: 30 s of the virtual board crossing the middle of the volume covers a quarter to a
third of each picture, so the demo asks for a fifth (``DEMO_THRESHOLDS``) instead of the 40 % a
lab's own calibration is held to (docs/rig-calibration.md); every other threshold is the
default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from labrig.calibration import named_board
from labrig.calibration.camera import CalibrationThresholds
from labrig.calibration.rig import calibrate_rig
from labrig.calibration.rig_captures import recorded_rig
from labrig.calibration.rig_checks import RigThresholds
from labrig.calibration.rig_stored import save_rig_calibration
from labrig.capture import create_session
from labrig.capture.rig_world import RigSceneName
from labrig.capture.rigs import VIRTUAL_RIG, get_rig
from labrig.domain.recordings import RecordingPurpose
from labrig.pipeline import save_rig_attempt
from labrig.scenarios.demo import DemoSummary, Say, analyse_all

if TYPE_CHECKING:
    from labrig.bootstrap import Services

BOARD = "virtual-rig-9x6-80"
BOARD_SECONDS, EVERY = 30.0, 15  # two pictures a second from each camera: 60 instants
# the virtual rig's board covers about a fifth of each picture (19-21 %, with the instants paired)
DEMO_THRESHOLDS = RigThresholds(min_coverage=0.15, camera=CalibrationThresholds(min_coverage=0.15))


def record_rig(
    services: Services,
    rig: str,
    scene: RigSceneName,
    seconds: float,
    session_id: str,
    purpose: RecordingPurpose = RecordingPurpose.ATTEMPT,
) -> str:
    """Record ``seconds`` of the virtual rig's cameras showing ``scene``; the attempt's id."""
    services.capture.virtual_rig.scene = scene
    recording = services.capture.start_rig_recording(
        rig, session_id, planned_seconds=seconds, segment_seconds=5.0
    )
    recording.wait(seconds)
    return save_rig_attempt(services.queue, recording.stop(), purpose=purpose)


def run_rig_demo(
    services: Services, attempts: int = 2, seconds: float = 4.0, say: Say = print
) -> DemoSummary:
    rig = get_rig(services.store, VIRTUAL_RIG)
    session_id = create_session(services.queue, "DEMO-RIG", "virtual rig markers", "labrig-demo")
    say(
        f"Recording the calibration board moving through the volume with the {len(rig.devices)} "
        f"cameras of rig {rig.name} ({BOARD_SECONDS:g} s)…"
    )
    board = record_rig(
        services, rig.name, "board", BOARD_SECONDS, session_id, RecordingPurpose.BOARD
    )
    say("Recording the board lying on the floor, the world's origin (1 s)…")
    floor = record_rig(services, rig.name, "floor", 1.0, session_id, RecordingPurpose.PLANE)
    say("Calibrating the rig: each camera's lens, then the poses together…")
    cameras, _ = recorded_rig(services.store, board, floor, EVERY)
    result = calibrate_rig(cameras, named_board(BOARD), DEMO_THRESHOLDS)
    stored = save_rig_calibration(services.store, result, rig)
    verdict = "valid" if stored.valid else "NOT valid: " + "; ".join(stored.reasons)
    say(
        f"Rig calibration {stored.id[:12]}…: RMS {stored.rms_px:.3f} px, board-length RMS "
        f"{result.checks.board_length.rms_error_mm:.2f} mm, world = the floor board; {verdict}"
    )
    attempt_ids = []
    for n in range(attempts):
        say(f"Recording attempt {n + 1} of {attempts} with the rig ({seconds:g} s)…")
        attempt_ids.append(record_rig(services, rig.name, "markers", seconds, session_id))
    say("Analysing (rig.sync → media.qc → tracking.rig → reconstruction.3d → kinematics.3d)…")
    return DemoSummary(stored.id, stored.rms_px, analyse_all(services, attempt_ids))
