"""Every menu action, triggered once: it does what it says, and nothing raises."""

from __future__ import annotations

from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services
from labrig.ui.app import Gui

WAIT_MS = 5_000


def _actions(gui: Gui) -> list[QAction]:
    found = []
    for menu_action in gui.window.menuBar().actions():
        menu = menu_action.menu()
        found += [a for a in menu.actions() if not a.isSeparator()]  # type: ignore[union-attr]
    return found


def test_every_menu_action_works_once(qtbot: QtBot, ui: Gui, services: Services) -> None:
    window = ui.window
    window.show()
    qtbot.waitExposed(window)
    actions = {a.objectName(): a for a in _actions(ui)}
    assert {"newSession", "quit", "refreshStatus", "copyDataFolder", "about"} <= set(actions)
    assert {f"go_{key}" for key in window.page_keys} <= set(actions)

    for key in reversed(window.page_keys):
        actions[f"go_{key}"].trigger()
        assert window.pages.currentWidget().objectName() == f"page_{key}"
    actions["newSession"].trigger()
    assert window.pages.currentWidget().objectName() == "page_capture"

    actions["refreshStatus"].trigger()
    qtbot.waitUntil(lambda: window.release_status.text() == "Release: none active", timeout=WAIT_MS)
    assert window.storage_status.text().startswith(f"Storage: {services.storage.level.label} (")

    actions["copyDataFolder"].trigger()
    assert QGuiApplication.clipboard().text() == str(services.store.root)

    actions["about"].trigger()
    box = window.findChild(QMessageBox, "aboutBox")
    assert box is not None and box.isVisible() and "Labrig" in box.text()
    box.close()

    actions["quit"].trigger()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=WAIT_MS)


def test_the_first_nine_pages_have_a_numbered_shortcut_and_every_page_a_go_entry(ui: Gui) -> None:
    shortcuts = [a.shortcut().toString() for a in _actions(ui) if a.objectName().startswith("go_")]
    count = len(ui.window.page_keys)
    assert shortcuts == [f"Ctrl+{i + 1}" if i < 9 else "" for i in range(count)]
