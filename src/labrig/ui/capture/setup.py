"""What the next recording is, set before Record: what it is for, what the virtual camera shows,
and whether the device and mode are calibrated (so whether results will be in mm or px).

The widget only shows and collects; the page reads the calibration off the GUI thread and decides.
Every line keeps its height whatever it says, so the buttons below never move under the mouse.
Threading contract: GUI thread only.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QWidget

from labrig.calibration import Readiness
from labrig.capture import SCENE_LABELS, SceneName
from labrig.domain.recordings import PURPOSE_LABELS, RecordingPurpose
from labrig.ui.common.palette import AMBER, GREEN, GREY
from labrig.ui.common.widgets import fixed_lines

# the purpose that goes with each scene, picked when the scene is switched (the technician may
# change it afterwards)
SCENE_PURPOSE: dict[SceneName, RecordingPurpose] = {
    "markers": RecordingPurpose.ATTEMPT,
    "board": RecordingPurpose.BOARD,
    "plane": RecordingPurpose.PLANE,
}
NOT_ANALYSED = (
    "Board recordings are not analysed: once saved, calibrate from them on the "
    '<a href="calibration">Calibration</a> screen.'
)


class RecordingSetup(QWidget):
    """The purpose, the virtual camera's scene (shown only for a virtual camera) and the
    calibration line, with a link to the Calibration screen."""

    sceneChosen = Signal(str)  # a SceneName
    purposeChanged = Signal()
    calibrateRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.purpose = QComboBox()
        self.purpose.setObjectName("recordingPurpose")
        for value, label in PURPOSE_LABELS.items():
            self.purpose.addItem(label, value)
        self.purpose.setToolTip(
            "An attempt is analysed. A board recording is kept for the Calibration screen: the "
            "board moved through its poses calibrates the lens, the board lying still on the "
            "measurement plane gives the scale in mm."
        )
        self.scene = QComboBox()
        self.scene.setObjectName("virtualScene")
        for scene, caption in SCENE_LABELS.items():
            self.scene.addItem(caption, scene)
        self.scene.setToolTip(
            "What the virtual camera shows, as you would hold the board up to a real camera or "
            "lay it on the measurement plane"
        )
        self.scene_caption = QLabel("Virtual camera shows")
        self.calibration = fixed_lines(QLabel(), 2)
        self.calibration.setObjectName("calibrationReadiness")
        self.calibration.setOpenExternalLinks(False)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("This recording is", self.purpose)
        form.addRow(self.scene_caption, self.scene)
        form.addRow(self.calibration)
        self.show_scene(None)
        self.scene.activated.connect(self._on_scene_activated)
        self.purpose.currentIndexChanged.connect(self.purposeChanged)
        self.calibration.linkActivated.connect(self._on_calibration_link_activated)

    def chosen_purpose(self) -> RecordingPurpose:
        return RecordingPurpose(self.purpose.currentData())

    def show_scene(self, scene: SceneName | None) -> None:
        """The virtual camera's scene, or None to hide the switch (a real camera)."""
        self.scene_caption.setVisible(scene is not None)
        self.scene.setVisible(scene is not None)
        if scene is not None:
            self.scene.setCurrentIndex(self.scene.findData(scene))

    def set_recording(self, recording: bool) -> None:
        """The purpose is fixed from Record until saved; the scene can be switched any time."""
        self.purpose.setEnabled(not recording)

    def show_readiness(self, readiness: Readiness | None, device_name: str) -> None:
        """The calibration line: None while it is read, or when no device is picked."""
        if self.chosen_purpose() is not RecordingPurpose.ATTEMPT:
            self._say(GREY, NOT_ANALYSED)
            return
        if readiness is None:
            text = f"Reading the calibration of {device_name}…" if device_name else ""
            self._say(GREY, escape(text))
            return
        sentence = escape(readiness.sentence(device_name))
        if readiness.metric:
            self._say(GREEN, sentence)
        else:
            self._say(AMBER, f'{sentence} <a href="calibration">Calibrate…</a>')

    def _say(self, fill: str, html: str) -> None:
        """``html`` on a status fill (green: mm; amber: pixels; grey: not analysed or unknown)."""
        self.calibration.setStyleSheet(
            f"QLabel {{ background: {fill}; color: black; padding: 2px 4px; }}" if html else ""
        )
        self.calibration.setText(html)

    @Slot(int)
    def _on_scene_activated(self, index: int) -> None:
        scene: SceneName = self.scene.itemData(index)
        self.sceneChosen.emit(scene)  # first: the purpose's change re-reads the camera's scene
        self.purpose.setCurrentIndex(self.purpose.findData(SCENE_PURPOSE[scene]))

    @Slot(str)
    def _on_calibration_link_activated(self, _link: str) -> None:
        self.calibrateRequested.emit()
