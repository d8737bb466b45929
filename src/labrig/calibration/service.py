"""The calibration service: what the Calibration screen asks of the core, over one store.

Every call opens its own reads (or media files) and blocks, so it may run on any thread; the screen
calls them on pool threads.
"""

from __future__ import annotations

from labrig.calibration.board_captures import (
    CalibrationOutcome,
    CaptureChoice,
    calibrate_from_capture,
    committed_captures,
)
from labrig.calibration.boards import Board, load_boards
from labrig.calibration.rig_service import RigCalibrationService
from labrig.calibration.stored import Readiness, readiness
from labrig.calibration.views import (
    CalibrationDetail,
    CalibrationSummary,
    Image,
    list_calibrations,
    load_calibration_detail,
    load_view_frame,
)
from labrig.store import Store
from labrig.tasks import UNTRACKED, Task


class CalibrationService:
    """Stored calibrations, the recordings a calibration can be made from, and
    calibrating from them."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.rig = RigCalibrationService(store)  # the rig mode's: rigs calibrated together

    def boards(self) -> dict[str, Board]:
        """The named boards, in the file's order (the lab lists its own board first)."""
        return load_boards()

    def calibrations(self) -> list[CalibrationSummary]:
        """Stored calibrations, newest first."""
        return list_calibrations(self.store)

    def detail(self, calibration_id: str) -> CalibrationDetail:
        return load_calibration_detail(self.store, calibration_id)

    def view_frame(self, detail: CalibrationDetail, view_name: str) -> Image | None:
        """The frame a view of ``detail`` came from (None: its views were files
        Labrig does not keep)."""
        return load_view_frame(self.store, detail, view_name)

    def recordings(self) -> list[CaptureChoice]:
        """Committed recordings a calibration may be made from, newest first."""
        return committed_captures(self.store)

    def calibrate(
        self,
        board_spec: str,
        capture: CaptureChoice,
        plane: CaptureChoice | None = None,
        every: int = 10,
        task: Task = UNTRACKED,
    ) -> CalibrationOutcome:
        """Solve from every ``every``-th frame of ``capture`` (scaled by ``plane`` when given) and
        store it; progress goes to ``task``, and a cancel of it stores nothing."""
        return calibrate_from_capture(self.store, board_spec, capture, plane, every, task=task)

    def readiness(self, device_id: str, mode: str) -> Readiness:
        """Whether recordings of ``device_id`` in ``mode`` (a label) would give mm or px now."""
        return readiness(self.store, device_id, mode)
