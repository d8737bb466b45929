"""The Devices page: every connected device with its verification verdict and the reason for it.

Threading contract: GUI thread only. Discovery and verification run on the
window's :class:`~labrig.ui.shell.device_checks.DeviceChecks` thread; they start the
first time a page needs the devices, so a window that never does probes nothing.
"""

from __future__ import annotations

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from labrig.capture import CaptureService
from labrig.ui.common.device_picker import DevicePicker
from labrig.ui.devices.rig_builder import RigBuilder
from labrig.ui.shell.device_checks import DeviceChecks

INTRO = (
    "Labrig uses a device only once it is listed in the compatibility inventory and a short test "
    "shows it delivers the pictures asked for. Select a device to read why it was verified or "
    "refused; change its mode or click Verify again after fixing what the reason says."
)


class DevicesPage(QWidget):
    """A :class:`DevicePicker` over the window's ``checks``, with a word on what verification
    means, and the rigs made of its devices (through ``capture``)."""

    def __init__(
        self, checks: DeviceChecks, capture: CaptureService, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.picker = DevicePicker(checks)
        self.rigs = RigBuilder(capture, self.picker)
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Devices</h2>"))
        layout.addWidget(intro)
        layout.addWidget(self.picker, 3)
        layout.addWidget(self.rigs, 2)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # the first time the window needs the devices; later, Search again looks anew
        self.picker.search()
        self.rigs.load()
