"""The Calibration screen's rig mode: stored rig calibrations with their verdicts; one in detail;
calibrating a rig from its board (and floor) recordings.

Threading contract: GUI thread only; the reads and the solve are
:class:`~labrig.ui.calibration.modes.CalibrationMode`'s (a Cancel stores nothing).
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QWidget

from labrig.calibration import (
    RigCalibrationDetail,
    RigCalibrationOutcome,
    RigCalibrationService,
    RigCalibrationSummary,
    RigRecordingChoice,
)
from labrig.ui.calibration.modes import CalibrationMode
from labrig.ui.calibration.rig_form import RigCalibrateForm
from labrig.ui.calibration.rig_model import RigCalibrationTableModel
from labrig.ui.calibration.rig_view import RigCalibrationView
from labrig.ui.shell.bridge import EventBridge


class RigCalibrationPage(CalibrationMode[RigCalibrationSummary, RigCalibrationDetail]):
    """Stored rig calibrations on the left with the form below them; the selected one in detail
    on the right."""

    nothing_selected_text = "Select a rig calibration to see its verdict, cameras and coverage."
    reading_text = "Reading the rig calibration…"
    list_noun, detail_noun = "rig calibrations", "rig calibration"
    empty_text = "No rig calibrations yet: calibrate a rig from a board recording below."

    def __init__(
        self,
        calibration: RigCalibrationService,
        boards: list[str],
        bridge: EventBridge,
        parent: QWidget | None = None,
    ) -> None:
        self.form = RigCalibrateForm(boards)
        self.detail = RigCalibrationView()
        super().__init__(
            calibration,
            RigCalibrationTableModel(),
            self.form,
            self.detail,
            bridge,
            ("rigCalibrationTable", "rigListStatus", "rigCalibrationSplitter"),
            parent,
        )
        self._calibration = calibration
        self.form.button.clicked.connect(self._on_form_button_clicked)

    def detail_key(self, detail: RigCalibrationDetail) -> str:
        return detail.summary.calibration_id

    def offer(self, recordings: list[RigRecordingChoice]) -> None:
        self.form.set_recordings(recordings)

    @Slot()
    def _on_form_button_clicked(self) -> None:
        request = self.form.request()
        if request is None:
            return
        calibrate = partial(
            self._calibration.calibrate,
            request.board,
            request.recording.attempt_id,
            request.floor.attempt_id if request.floor is not None else None,
            request.every,
            request.thresholds,
        )
        self.solve(
            f"Calibrating rig {request.recording.rig_name}",
            lambda task: calibrate(task=task),
            self._said,
        )

    @staticmethod
    def _said(outcome: RigCalibrationOutcome) -> tuple[str, str]:
        result, stored = outcome.result, outcome.stored
        verdict = (
            "valid: the rig's recordings are analysed in 3-D through it"
            if result.valid
            else "NOT valid: what to do is on the right"
        )
        return (
            f"Rig calibration {stored.id[:12]}… of rig {stored.rig_name}: RMS "
            f"{result.rms_px:.3f} px over {result.instants} instants, {verdict}.",
            stored.id,
        )
