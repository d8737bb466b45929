"""The "Calibrate from a board capture" form: which recording, which board, and an optional
plane recording.

The form only collects the choice; the page runs the calibration off the GUI thread.
Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)

from labrig.calibration import CaptureChoice
from labrig.domain.recordings import RecordingPurpose
from labrig.ui.common.task_bar import TaskBar

NO_PLANE = "none: outputs stay in pixels"
NO_CAPTURES = (
    "No board recordings yet. On the Capture screen, choose \u201cThis recording is: the "
    "calibration board, moved through its poses\u201d (the virtual camera: show the board held "
    "up), record about 10 s, and it appears here once saved. Then record the board lying still "
    "on the measurement plane for about 2 s, for results in mm."
)
BOARD_TIP = (
    "A board named in resources/boards.json, or a spec: chessboard:COLSxROWS:SQUARE_MM (inner "
    "corners) or charuco:COLSxROWS:SQUARE_MM:MARKER_MM:DICT (squares)."
)
PLANE_TIP = (
    "A recording of the board lying flat on the measurement plane, by the same camera in the same "
    "mode. With it, a valid calibration turns analysis outputs into millimetres."
)


@dataclass(frozen=True)
class CalibrateRequest:
    board: str
    capture: CaptureChoice
    plane: CaptureChoice | None
    every: int


class CalibrateForm(QGroupBox):
    def __init__(self, boards: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__("Calibrate from a board capture", parent)
        self.capture = QComboBox()
        self.capture.setObjectName("boardCapture")
        self.plane = QComboBox()
        self.plane.setObjectName("planeCapture")
        self.plane.setToolTip(PLANE_TIP)
        self.board = QComboBox()
        self.board.setObjectName("boardSpec")
        self.board.setEditable(True)
        self.board.addItems(list(boards))
        self.board.setToolTip(BOARD_TIP)
        self.every = QSpinBox()
        self.every.setObjectName("everyFrames")
        self.every.setRange(1, 1000)
        self.every.setValue(10)
        self.every.setToolTip("Use every Nth frame of the recording as a view")
        self.button = QPushButton("Calibrate")
        self.button.setObjectName("calibrateButton")
        self.status = QLabel("")
        self.status.setObjectName("calibrateStatus")
        self.status.setWordWrap(True)
        self.progress = TaskBar("calibrateTask")
        form = QFormLayout(self)
        form.addRow("Board recording", self.capture)
        form.addRow("Board", self.board)
        form.addRow("Every Nth frame", self.every)
        form.addRow("Plane recording", self.plane)
        form.addRow(self.button)
        form.addRow(self.progress)
        form.addRow(self.status)
        self._running = False
        self._update()

    def set_captures(self, captures: Sequence[CaptureChoice]) -> None:
        """Offer the board recordings as boards and the plane recordings as planes (newest first),
        keeping the current choices when they are still offered. Otherwise the newest board
        recording is picked, and the newest plane recording of the same camera and mode."""
        boards = [c for c in captures if c.offered_as(RecordingPurpose.BOARD)]
        planes = [c for c in captures if c.offered_as(RecordingPurpose.PLANE)]
        self._fill(self.capture, None, boards)
        board = self.capture.currentData()
        kept_plane = self._fill(self.plane, NO_PLANE, planes)
        if board is not None and not kept_plane:
            matching = next(
                (
                    c
                    for c in planes
                    if c.purpose == RecordingPurpose.PLANE.value
                    and (c.device_id, c.mode) == (board.device_id, board.mode)
                ),
                None,
            )
            if matching is not None:
                self.plane.setCurrentIndex(self.plane.findText(matching.describe()))
        if not boards:
            self.status.setText(NO_CAPTURES)
        elif self.status.text() == NO_CAPTURES:
            self.status.clear()
        self._update()

    @staticmethod
    def _fill(combo: QComboBox, first: str | None, choices: Sequence[CaptureChoice]) -> bool:
        """Offer ``choices`` (after ``first``, standing for none); True when the choice made
        before is still offered and kept."""
        keep = combo.currentData()
        combo.clear()
        if first is not None:
            combo.addItem(first, None)
        for choice in choices:
            combo.addItem(choice.describe(), choice)
        at = combo.findText(keep.describe()) if keep is not None else -1
        combo.setCurrentIndex(max(at, 0))
        return at >= 0

    def set_running(self, running: bool) -> None:
        self._running = running
        self._update()

    def request(self) -> CalibrateRequest | None:
        capture = self.capture.currentData()
        if capture is None:
            return None
        return CalibrateRequest(
            self.board.currentText().strip(), capture, self.plane.currentData(), self.every.value()
        )

    def _update(self) -> None:
        self.button.setEnabled(not self._running and self.capture.count() > 0)
        self.button.setText("Calibrating…" if self._running else "Calibrate")
