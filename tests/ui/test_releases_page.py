"""The Releases page: register, health-check, activate and roll back through the real
release service."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services
from labrig.events import events_after
from labrig.ui.app import Gui
from labrig.ui.common.roles_policy import NO_ADMIN_POLICY
from labrig.ui.releases.page import EMPTY, NO_ACTIVE, ReleasesPage

LEFT = Qt.MouseButton.LeftButton
WAIT_MS = 30_000


def _page(qtbot: QtBot, ui: Gui) -> ReleasesPage:
    ui.window.show()
    ui.window.show_page("releases")
    page = ui.window.pages.currentWidget()
    assert isinstance(page, ReleasesPage)
    qtbot.waitUntil(lambda: not page.busy, timeout=WAIT_MS)
    return page


def _idle(qtbot: QtBot, page: ReleasesPage) -> None:
    qtbot.waitUntil(lambda: not page.busy, timeout=WAIT_MS)


#: a release's health check, clicked: the reference scenes recorded and analysed
CHECK_MS = 120_000


def test_a_release_is_registered_checked_activated_and_rolled_back_by_clicking(
    qtbot: QtBot, ui: Gui, services: Services
) -> None:
    services.start()  # deployment events reach the window through the bridge
    delivered: list[str] = []
    ui.bridge.eventRecorded.connect(lambda event: delivered.append(event.name))
    page = _page(qtbot, ui)
    assert page.table.rowCount() == 0 and not page.check_button.isEnabled()

    qtbot.mouseClick(page.register_button, LEFT)
    _idle(qtbot, page)
    qtbot.waitUntil(lambda: page.table.rowCount() == 1, timeout=WAIT_MS)
    assert page.table.item(0, 2).text() == "not checked"
    assert page.selected() is not None and not page.activate_button.isEnabled()  # not healthy yet

    qtbot.mouseClick(page.check_button, LEFT)
    # the check records the reference scenes and analyses them (12 s alone; a busy machine, with
    # a bundle built beside it, has taken over 30)
    qtbot.waitUntil(lambda: page.table.item(0, 2).text() == "passed", timeout=CHECK_MS)
    assert "passed" in page.message.text() and "OK" in page.report.text()
    assert "units: mm, s" in page.message.text()  # words, not a dictionary

    qtbot.waitUntil(page.activate_button.isEnabled, timeout=WAIT_MS)
    qtbot.mouseClick(page.activate_button, LEFT)
    qtbot.waitUntil(lambda: page.table.item(0, 1).text() == "active", timeout=WAIT_MS)
    [release] = services.releases.list()
    assert release.status == "active"
    qtbot.waitUntil(
        lambda: (
            ui.window.release_status.text() == f"Release: {release.version} ({release.digest[:8]})"
        ),
        timeout=WAIT_MS,
    )

    # the page reads the list again when the bridge brings deployment.activated, its buttons off
    # meanwhile
    qtbot.waitUntil(lambda: "deployment.activated" in delivered and not page.busy, timeout=WAIT_MS)
    assert not page.rollback_button.isEnabled()  # a rollback needs a reason
    qtbot.keyClicks(page.reason, "tracking drifted on the reference set")
    assert page.rollback_button.isEnabled()
    qtbot.mouseClick(page.rollback_button, LEFT)
    qtbot.waitUntil(lambda: page.table.item(0, 1).text() == "rolled_back", timeout=WAIT_MS)
    assert page.table.item(0, 5).text() == "tracking drifted on the reference set"
    names = [e.name for e in events_after(services.store, 0)]
    assert "deployment.activated" in names and "deployment.rolledback" in names
    qtbot.waitUntil(
        lambda: ui.window.release_status.text() == "Release: none active", timeout=WAIT_MS
    )


def test_an_empty_catalog_says_what_a_release_is_and_a_read_keeps_the_last_message(
    qtbot: QtBot, ui: Gui
) -> None:
    page = _page(qtbot, ui)
    qtbot.waitUntil(lambda: page.list_status.text() == EMPTY, timeout=WAIT_MS)
    assert "Reading" not in page.message.text() and page.table.rowCount() == 0
    assert not page.no_active.isHidden() and page.no_active.text() == NO_ACTIVE

    qtbot.mouseClick(page.register_button, LEFT)
    qtbot.waitUntil(lambda: "registered" in page.message.text(), timeout=WAIT_MS)
    page.refresh()  # as when the page is shown again, or the bridge brings a deployment event
    _idle(qtbot, page)
    assert "registered" in page.message.text()
    assert page.list_status.text() == "1 release, newest first."
    assert not page.no_active.isHidden()  # registered is not active


def test_the_no_admin_policy_is_stated_until_an_admin_is_assigned(
    qtbot: QtBot, ui: Gui, services: Services
) -> None:
    page = _page(qtbot, ui)
    qtbot.waitUntil(lambda: not page.policy.isHidden(), timeout=WAIT_MS)
    assert page.policy.text() == NO_ADMIN_POLICY

    ui.window.show_page("settings")
    services.governance.access.set_role("ada", "admin", "the lab's admin")
    ui.window.show_page("releases")
    qtbot.waitUntil(page.policy.isHidden, timeout=WAIT_MS)
