"""What the next recording is, set before Record: what it is for, what the virtual camera shows,
and whether the device and mode are calibrated (so whether results will be in mm or px).

:meth:`RecordingSetup.follow` shows it for the device and mode the page has picked: the scene switch
for a virtual camera (flipping it changes what the camera shows at once, for the preview and the
recording alike), and the calibration, read off the GUI thread, newest request winning. Every line
keeps its height whatever it says, so the buttons below never move under the mouse. Threading
contract: GUI thread only.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QWidget

from labrig.calibration import CalibrationService, Readiness
from labrig.capture import SCENE_LABELS, SCENE_PURPOSE, CaptureService, DeviceKind, SceneName
from labrig.domain.recordings import PURPOSE_LABELS, RecordingPurpose
from labrig.ui.common.palette import AMBER, GREEN, GREY
from labrig.ui.common.widgets import fixed_lines
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.device_checks import Choice
from labrig.ui.shell.latest import Latest

NOT_ANALYSED = (
    "Board recordings are not analysed: once saved, calibrate from them on the "
    '<a href="calibration">Calibration</a> screen.'
)


class RecordingSetup(QWidget):
    """The purpose, the virtual camera's scene (shown only for a virtual camera, switched through
    ``capture``) and the calibration line (read from ``calibration``), with a link to the
    Calibration screen."""

    calibrateRequested = Signal()
    modeRequested = Signal(str)  # the label of a mode in which the device is calibrated

    def __init__(
        self,
        capture: CaptureService,
        calibration: CalibrationService,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._capture, self._calibration = capture, calibration
        self._reads = Latest(BackgroundCalls(1, self))
        self._choice: Choice | None = None
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
        self.purpose.currentIndexChanged.connect(lambda _index: self.follow(self._choice))
        self.calibration.linkActivated.connect(self._on_calibration_link_activated)

    def chosen_purpose(self) -> RecordingPurpose:
        return RecordingPurpose(self.purpose.currentData())

    def follow(self, choice: Choice | None) -> None:
        """Show the set-up for ``choice`` (the picked device and mode): its scene switch when it
        is a virtual camera, and its calibration, read anew."""
        self._choice = choice
        virtual = choice is not None and choice.device.kind is DeviceKind.VIRTUAL
        device_id = choice.device.device_id if choice is not None else ""
        self.show_scene(self._capture.scenes.get(device_id) if virtual else None)
        mode = choice.usable_mode if choice is not None else None
        if choice is None or mode is None:
            self.show_readiness(None, "")
            return
        name, label, calibration = choice.device.name, mode.label(), self._calibration
        self.show_readiness(None, name)
        self._reads.request(
            lambda: calibration.readiness(device_id, label),
            lambda readiness: self._on_read(readiness, name),
            lambda error: self._say(
                AMBER, escape(f"Could not read the calibration: {say_error(error)}")
            ),
        )

    def _on_read(self, readiness: Readiness, name: str) -> None:
        choice = self._choice
        mode = choice.usable_mode if choice is not None else None
        shown = (choice.device.device_id, mode.label()) if choice and mode else None
        if shown == (readiness.device_id, readiness.mode):  # not overtaken by another pick
            self.show_readiness(readiness, name)

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
        elif readiness.metric_modes:
            other = readiness.metric_modes[0]
            self._say(
                AMBER,
                f'{sentence} It gives mm in {escape(other)}: <a href="mode:{escape(other)}">use '
                'that mode</a> or <a href="calibration">calibrate this one…</a>',
            )
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
        choice = self._choice
        if choice is not None and choice.device.kind is DeviceKind.VIRTUAL:
            # first: the purpose's change shows the camera's scene again
            self._capture.scenes.set(choice.device.device_id, scene)
        self.purpose.setCurrentIndex(self.purpose.findData(SCENE_PURPOSE[scene]))

    @Slot(str)
    def _on_calibration_link_activated(self, link: str) -> None:
        if link.startswith("mode:"):
            self.modeRequested.emit(link.removeprefix("mode:"))
        else:
            self.calibrateRequested.emit()
