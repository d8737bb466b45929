"""Driving the Capture and Devices pages the way a technician does: typing, clicking, waiting."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot

from labrig.ui.app import Gui
from labrig.ui.capture.page import CapturePage, Phase
from labrig.ui.common.device_picker import DevicePicker
from labrig.ui.devices.page import DevicesPage

LEFT = Qt.MouseButton.LeftButton
MARKERS = "virtual:markers"
WAIT_MS = 8_000


def shown_capture_page(qtbot: QtBot, gui: Gui) -> CapturePage:
    gui.window.resize(1200, 800)
    gui.window.show()
    qtbot.waitExposed(gui.window)
    gui.window.show_page("capture")
    page = gui.window.pages.currentWidget()
    assert isinstance(page, CapturePage)
    return page


def shown_devices_page(qtbot: QtBot, gui: Gui) -> DevicesPage:
    gui.window.show()
    qtbot.waitExposed(gui.window)
    gui.window.show_page("devices")
    page = gui.window.pages.currentWidget()
    assert isinstance(page, DevicesPage)
    return page


def fill_session(
    qtbot: QtBot, page: CapturePage, subject: str, protocol: str, operator: str
) -> None:
    for edit, text in zip(page.form.edits, (subject, protocol, operator), strict=True):
        edit.clear()
        qtbot.keyClicks(edit, text)
    qtbot.mouseClick(page.form.button, LEFT)


def pick_device(qtbot: QtBot, picker: DevicePicker, device_id: str) -> None:
    """Wait for discovery to list ``device_id``, then click its row."""
    qtbot.waitUntil(lambda: picker.row_of(device_id) is not None, timeout=WAIT_MS)
    row = picker.row_of(device_id)
    assert row is not None
    rect = picker.table.visualItemRect(picker.table.item(row, 0))
    qtbot.mouseClick(picker.table.viewport(), LEFT, pos=rect.center())
    choice = picker.choice()
    assert choice is not None and choice.device.device_id == device_id


def wait_verified(qtbot: QtBot, picker: DevicePicker, device_id: str) -> None:
    qtbot.waitUntil(lambda: picker.status_of(device_id).startswith("Verified"), timeout=WAIT_MS)


def start_recording(qtbot: QtBot, page: CapturePage) -> None:
    qtbot.waitUntil(page.record_button.isEnabled, timeout=WAIT_MS)
    qtbot.mouseClick(page.record_button, LEFT)
    qtbot.waitUntil(lambda: page.phase is Phase.RECORDING, timeout=WAIT_MS)


def choose(qtbot: QtBot, combo: QComboBox, data: Any) -> None:
    """Pick the item of ``combo`` whose data is ``data`` with the keyboard, as a user stepping
    through a closed combo box does (each step is an ``activated``)."""
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Home)
    for _ in range(combo.count()):
        if combo.currentData() == data:
            return
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert combo.currentData() == data, f"{data!r} is not offered by {combo.objectName()}"
