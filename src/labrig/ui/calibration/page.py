"""The Calibration screen's one-camera mode: stored calibrations with binding, age and verdict;
one in detail; calibrating anew from a board recording.

Threading contract: GUI thread only; the reads and the solve are
:class:`~labrig.ui.calibration.modes.CalibrationMode`'s. The frame of the view picked in the detail
is decoded on a pool thread too, newest pick wins.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QWidget

from labrig.calibration import (
    CalibrationDetail,
    CalibrationOutcome,
    CalibrationService,
    CalibrationSummary,
    CaptureChoice,
)
from labrig.ui.calibration.form import CalibrateForm
from labrig.ui.calibration.model import CalibrationTableModel
from labrig.ui.calibration.modes import CalibrationMode
from labrig.ui.calibration.view import CalibrationView
from labrig.ui.shell.background import say_error
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.latest import Latest


class CalibrationPage(CalibrationMode[CalibrationSummary, CalibrationDetail]):
    """Stored calibrations on the left with the form below them; the selected one in
    detail on the right."""

    nothing_selected_text = "Select a calibration to see its verdict and errors."
    reading_text = "Reading the calibration…"
    list_noun, detail_noun = "calibrations", "calibration"
    empty_text = "No calibrations yet: calibrate a device from a recording of the board below."

    def __init__(
        self, calibration: CalibrationService, bridge: EventBridge, parent: QWidget | None = None
    ) -> None:
        # in the file's order: the lab's own board first
        self.form = CalibrateForm(list(calibration.boards()))
        self.detail = CalibrationView()
        super().__init__(
            calibration,
            CalibrationTableModel(),
            self.form,
            self.detail,
            bridge,
            ("calibrationTable", "listStatus", "calibrationSplitter"),
            parent,
        )
        self._calibration = calibration
        self._frame_reads = Latest(self._reads)
        self.form.button.clicked.connect(self._on_form_button_clicked)
        self.detail.viewPicked.connect(self._on_detail_view_picked)

    def detail_key(self, detail: CalibrationDetail) -> str:
        return detail.summary.calibration_id

    def offer(self, recordings: list[CaptureChoice]) -> None:
        self.form.set_captures(recordings)

    @Slot(str)
    def _on_detail_view_picked(self, view_name: str) -> None:
        detail = self.detail.current
        if detail is None:
            return
        calibration_id = detail.summary.calibration_id
        self._frame_reads.request(
            partial(self._calibration.view_frame, detail, view_name),
            partial(self.detail.show_frame, calibration_id, view_name),
            lambda error: self.detail.show_frame_failed(
                calibration_id, view_name, say_error(error)
            ),
        )

    @Slot()
    def _on_form_button_clicked(self) -> None:
        request = self.form.request()
        if request is None:
            return
        calibrate = partial(
            self._calibration.calibrate,
            request.board,
            request.capture,
            request.plane,
            request.every,
        )
        self.solve(
            f"Calibrating from {request.capture.describe()}",
            lambda task: calibrate(task=task),
            self._said,
        )

    @staticmethod
    def _said(outcome: CalibrationOutcome) -> tuple[str, str]:
        result = outcome.result
        verdict = "valid" if result.valid else "NOT valid (see the reasons on the right)"
        scale = "; outputs in mm through the plane view" if outcome.plane else ""
        return (
            f"Calibration {outcome.stored.id[:12]}…: RMS {result.rms_px:.3f} px over "
            f"{result.view_count} views, {verdict}{scale}.",
            outcome.stored.id,
        )
