"""The Settings screen in the window: what each setting does, and configuring the archive sync
through the real sync service (refusals in its words); the status bar points there."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from labrig.access import AccessControl
from labrig.bootstrap import Services
from labrig.ui.app import Gui
from labrig.ui.settings.page import STORE_FACTS, SYNC_DOES, SettingsPage

LEFT = Qt.MouseButton.LeftButton
WAIT_MS = 10_000


def _page(qtbot: QtBot, ui: Gui) -> SettingsPage:
    ui.window.resize(1280, 800)
    ui.window.show()
    ui.window.show_page("settings")
    page = ui.window.pages.currentWidget()
    assert isinstance(page, SettingsPage)
    qtbot.waitUntil(lambda: page.status is not None and not page.busy, timeout=WAIT_MS)
    return page


def _save(qtbot: QtBot, page: SettingsPage, folder: str, reason: str) -> None:
    for edit, text in ((page.folder, folder), (page.reason, reason)):
        edit.clear()
        qtbot.keyClicks(edit, text)
    qtbot.mouseClick(page.save_button, LEFT)


def test_the_status_bar_points_to_settings_where_each_setting_says_what_it_does(
    qtbot: QtBot, ui: Gui
) -> None:
    bar = ui.window.sync_status
    qtbot.waitUntil(lambda: bar.text() == "Sync: not configured", timeout=WAIT_MS)
    assert "Settings screen" in bar.toolTip() and "labrig sync configure" not in bar.toolTip()

    page = _page(qtbot, ui)
    shown = {label.text() for label in page.findChildren(QLabel)}
    assert {does for _, _, does in STORE_FACTS} | {SYNC_DOES} <= shown
    assert page.destination.text() == "not configured: nothing is copied to an archive yet"


def test_an_admin_configures_the_archive_sync_and_bad_input_is_refused_in_words(
    qtbot: QtBot, ui: Gui, services: Services, tmp_path: Path
) -> None:
    page = _page(qtbot, ui)
    archive = tmp_path / "archive"
    _save(qtbot, page, str(archive), "")
    assert page.message.text() == "Not saved: type why the destination changes (the Reason box)."

    _save(qtbot, page, str(archive), "the lab's share")  # not created yet
    qtbot.waitUntil(lambda: page.message.text().startswith("Not saved ("), timeout=WAIT_MS)
    assert "is not a folder that exists here" in page.message.text()

    archive.mkdir()
    _save(qtbot, page, str(archive), "the lab's share")
    qtbot.waitUntil(lambda: page.message.text().startswith("Saved:"), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: page.destination.text().startswith("'archive' at "), timeout=WAIT_MS)
    [entry] = services.governance.audit.entries()
    assert (entry.action, entry.reason) == ("sync.configure", "the lab's share")
    # the status bar follows by itself
    qtbot.waitUntil(lambda: "archived" in ui.window.sync_status.text(), timeout=WAIT_MS)
    assert ui.window.sync_status.text().startswith("Sync: ")


def test_once_an_admin_exists_a_non_admin_is_refused_in_the_services_words(
    qtbot: QtBot, ui: Gui, services: Services, tmp_path: Path
) -> None:
    AccessControl(services.store, user=lambda: "ada").set_role("ada", "admin", "the lab's admin")
    page = _page(qtbot, ui)  # signed in as this computer's user, who has no role
    _save(qtbot, page, str(tmp_path), "moving the archive")
    qtbot.waitUntil(lambda: page.message.text().startswith("Not saved ("), timeout=WAIT_MS)
    assert page.message.text().startswith("Not saved (LABRIG_ROLE_REQUIRED): changing settings")
    assert services.governance.audit.entries()[-1].action == "roles.set"  # nothing configured
