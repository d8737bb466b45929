"""The "Calibrate a rig from its recordings" form: which board recording of a rig, an optional floor
recording of the same cameras, which board, and the thresholds a technician may loosen.

The form only collects the choice; the page runs the calibration off the GUI thread.
Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QSpinBox, QWidget

from labrig.calibration import RigRecordingChoice
from labrig.calibration.camera import CalibrationThresholds
from labrig.calibration.rig_checks import RigThresholds
from labrig.capture.rig_board import BOARD_NAMES
from labrig.capture.rig_camera import rig_camera_index
from labrig.domain.recordings import RecordingPurpose
from labrig.ui.calibration.form import BOARD_TIP
from labrig.ui.common.task_bar import TaskBar
from labrig.ui.common.widgets import message_label, named_button

VIRTUAL_BOARD = BOARD_NAMES["chessboard"]  # the virtual rig's board, unless set otherwise
NO_FLOOR = "none: the first camera is the origin"
NO_RECORDINGS = (
    "No rig board recordings yet. On the Capture screen, pick the rig (the A rig tab), choose "
    "\u201cThis recording is: the board, carried through the volume\u201d (the virtual "
    "rig shows it), and record about 30 s while the board is carried where the cameras see it. "
    "Then record the board lying on the floor for about 1 s: it sets the world's origin and axes."
)
FLOOR_TIP = (
    "A rig recording of the board lying flat on the floor, by the same cameras: the board's plane "
    "becomes z = 0 (z up) and its first corner the origin. Without one, the first camera is the "
    "origin (x right, y down, z ahead)."
)
LENS_COVERAGE_TIP = (
    "How much of each camera's picture the board's corners must reach for its lens to be solved "
    "('labrig calibrate-rig --min-coverage')."
)
SHARED_COVERAGE_TIP = (
    "How much of each camera's picture the views it shares with another camera must reach "
    "('--min-rig-coverage'). The virtual rig's 30 s board recording reaches about a fifth "
    "(19-21 %, with the instants a recording pairs): the demo asks for 15 %."
)


@dataclass(frozen=True)
class RigCalibrateRequest:
    board: str
    recording: RigRecordingChoice
    floor: RigRecordingChoice | None
    every: int
    thresholds: RigThresholds


def _percent(name: str, value: float, tip: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setRange(0, 100)
    spin.setSuffix(" %")
    spin.setValue(round(value * 100))
    spin.setToolTip(tip)
    return spin


class RigCalibrateForm(QGroupBox):
    def __init__(self, boards: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__("Calibrate a rig from its recordings", parent)
        self.recording = QComboBox()
        self.recording.setObjectName("rigBoardRecording")
        self.floor = QComboBox()
        self.floor.setObjectName("rigFloorRecording")
        self.floor.setToolTip(FLOOR_TIP)
        self.board = QComboBox()
        self.board.setObjectName("rigBoardSpec")
        self.board.setEditable(True)
        self.board.addItems(list(boards))
        self.board.setToolTip(BOARD_TIP)
        self.every = QSpinBox()
        self.every.setObjectName("rigEveryInstant")
        self.every.setRange(1, 1000)
        self.every.setValue(10)
        self.every.setToolTip("Use every Nth instant of the recording (one frame of each camera)")
        self.lens_coverage = _percent(
            "lensCoverage", CalibrationThresholds().min_coverage, LENS_COVERAGE_TIP
        )
        self.shared_coverage = _percent(
            "sharedCoverage", RigThresholds().min_coverage, SHARED_COVERAGE_TIP
        )
        self.button = named_button("calibrateRigButton", "Calibrate the rig")
        self.status = message_label("calibrateRigStatus")
        self.progress = TaskBar("calibrateRigTask")
        for combo in (self.recording, self.floor, self.board):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(16)
        form = QFormLayout(self)
        form.addRow("Board recording", self.recording)
        form.addRow("Floor recording", self.floor)
        form.addRow("Board", self.board)
        form.addRow("Every Nth instant", self.every)
        form.addRow("Lens coverage", self.lens_coverage)
        form.addRow("Shared coverage", self.shared_coverage)
        form.addRow(self.button)
        form.addRow(self.progress)
        form.addRow(self.status)
        self._recordings: list[RigRecordingChoice] = []
        self._running = False
        self.recording.currentIndexChanged.connect(lambda _index: self._offer_floors())
        self._update()

    def set_recordings(self, recordings: Sequence[RigRecordingChoice]) -> None:
        """Offer the rig board recordings (newest first), keeping the one picked when it is still
        offered; the floor recordings offered are those of the same cameras."""
        self._recordings = list(recordings)
        boards = [r for r in recordings if r.purpose is RecordingPurpose.BOARD]
        keep = self.recording.currentData()
        self.recording.blockSignals(True)
        self.recording.clear()
        for r in boards:
            self.recording.addItem(r.describe(), r)
        at = self.recording.findText(keep.describe()) if keep is not None else -1
        self.recording.setCurrentIndex(max(at, 0))
        self.recording.blockSignals(False)
        self._offer_floors()
        if not boards:
            self.status.setText(NO_RECORDINGS)
        elif self.status.text() == NO_RECORDINGS:
            self.status.clear()
        self._update()

    def _suggest_board(self) -> None:
        """A recording of the virtual rig's cameras: its board (the chessboard unless the
        technician has typed or picked another)."""
        board = self.recording.currentData()
        virtual = board is not None and all(
            rig_camera_index(d["device_id"].removeprefix("virtual:")) is not None
            for d in board.devices
        )
        if virtual and self.board.currentIndex() == 0 and self.board.findText(VIRTUAL_BOARD) > 0:
            self.board.setCurrentIndex(self.board.findText(VIRTUAL_BOARD))

    def _offer_floors(self) -> None:
        """The floor recordings made with the chosen board recording's cameras, newest first and
        the newest picked, unless the one picked before is still offered."""
        board = self.recording.currentData()
        keep = self.floor.currentData()
        self.floor.clear()
        self.floor.addItem(NO_FLOOR, None)
        floors = [
            r
            for r in self._recordings
            if r.purpose is RecordingPurpose.PLANE
            and board is not None
            and r.devices == board.devices
        ]
        for r in floors:
            self.floor.addItem(r.describe(), r)
        at = self.floor.findText(keep.describe()) if keep is not None else -1
        self.floor.setCurrentIndex(at if at >= 0 else min(1, len(floors)))
        self._suggest_board()
        self._update()

    def set_running(self, running: bool) -> None:
        self._running = running
        self._update()

    def request(self) -> RigCalibrateRequest | None:
        recording = self.recording.currentData()
        if recording is None:
            return None
        thresholds = RigThresholds(
            min_coverage=self.shared_coverage.value() / 100,
            camera=CalibrationThresholds(min_coverage=self.lens_coverage.value() / 100),
        )
        return RigCalibrateRequest(
            self.board.currentText().strip(),
            recording,
            self.floor.currentData(),
            self.every.value(),
            thresholds,
        )

    def _update(self) -> None:
        self.button.setEnabled(not self._running and self.recording.count() > 0)
        self.button.setText("Calibrating…" if self._running else "Calibrate the rig")
        for widget in (self.recording, self.floor, self.board, self.every):
            widget.setEnabled(not self._running)
