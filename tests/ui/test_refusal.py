"""A start-up refusal in a message box: shown where a screen exists, never on a headless
platform."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from labrig.instance_lock import StoreInUseError
from labrig.ui.shell.refusal import refusal_box, show_refusal

ERROR = StoreInUseError(
    "the data folder /data is already open in another Labrig window: process 42"
)


def test_the_box_says_what_is_wrong_and_its_code(qtbot: QtBot) -> None:
    box = refusal_box(ERROR)
    qtbot.addWidget(box)
    assert box.icon() is QMessageBox.Icon.Warning
    assert box.text().startswith("The data folder /data is already open in another Labrig window")
    assert box.informativeText() == "Error code: LABRIG_STORE_IN_USE"


def test_offscreen_nothing_modal_is_shown(qtbot: QtBot) -> None:
    assert show_refusal(ERROR) is False  # would block forever if it showed a modal box here
