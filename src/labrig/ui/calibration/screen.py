"""The Calibration screen: one camera's calibrations (:class:`~labrig.ui.calibration.page.
CalibrationPage`) and a rig's (:class:`~labrig.ui.calibration.rig_page.RigCalibrationPage`), one
tab each under the screen's title.

Threading contract: GUI thread only; each mode reads and calibrates on its own threads.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from labrig.calibration import CalibrationService
from labrig.ui.calibration.page import CalibrationPage
from labrig.ui.calibration.rig_page import RigCalibrationPage
from labrig.ui.shell.bridge import EventBridge


class CalibrationScreen(QWidget):
    def __init__(
        self, calibration: CalibrationService, bridge: EventBridge, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.camera = CalibrationPage(calibration, bridge)
        self.rig = RigCalibrationPage(calibration.rig, list(calibration.boards()), bridge)
        self.modes = QTabWidget()
        self.modes.setObjectName("calibrationModes")
        self.modes.addTab(self.camera, "One camera")
        self.modes.addTab(self.rig, "A rig")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Calibration</h2>"))
        layout.addWidget(self.modes, 1)

    @property
    def busy(self) -> bool:
        """A read or a calibration of either mode is running or queued."""
        return self.camera.busy or self.rig.busy

    def shut_down(self, timeout_ms: int) -> None:
        self.camera.shut_down(timeout_ms)
        self.rig.shut_down(timeout_ms)
