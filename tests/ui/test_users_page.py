"""The Users and roles screen in the window, acting as named users of one real store: an admin
assigns a role by clicking (the roster and the Audit screen show it), the first admin is made by
anyone, a non-admin reads the roster only, and a refusal from the access service is shown in its
words."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from labrig.access import AccessControl
from labrig.bootstrap import Services, bootstrap
from labrig.store import Store
from labrig.ui.app import Gui, build_main_window
from labrig.ui.audit.page import AuditPage
from labrig.ui.users.page import UsersPage
from tests.ui.jobs_helpers import TEST_LEASE

LEFT = Qt.MouseButton.LeftButton
WAIT_MS = 10_000
OpenAs = Callable[[str], Gui]


def as_user(store: Store, user: str) -> AccessControl:
    return AccessControl(store, user=lambda: user, host=lambda: "bench-1")


@pytest.fixture
def open_as(qtbot: QtBot, store: Store) -> Iterator[OpenAs]:
    """Opens the window over ``store`` as the user named (the access service is told who signs in,
    as the window's own is by the operating system); every window is torn down afterwards."""
    opened: list[tuple[Gui, Services]] = []

    def open_window(user: str) -> Gui:
        services = bootstrap(
            store=store, poll_seconds=0.05, lease=TEST_LEASE, access=as_user(store, user)
        )
        gui = build_main_window(services)
        qtbot.addWidget(gui.window)
        gui.window.resize(1280, 800)
        gui.window.show()
        opened.append((gui, services))
        return gui

    yield open_window
    for gui, services in opened:
        gui.window.shut_down()
        gui.executor.shutdown(5000)
        gui.bridge.detach(services)


def _users(qtbot: QtBot, gui: Gui) -> UsersPage:
    gui.window.show_page("users")
    page = gui.window.pages.currentWidget()
    assert isinstance(page, UsersPage)
    qtbot.waitUntil(lambda: not page.busy and page.roster is not None, timeout=WAIT_MS)
    return page


def _assign(qtbot: QtBot, page: UsersPage, user: str, role: str, reason: str) -> None:
    page.user.clear()
    qtbot.keyClicks(page.user, user)
    page.role.setCurrentIndex(page.role.findData(role))
    page.reason.clear()
    qtbot.keyClicks(page.reason, reason)
    qtbot.mouseClick(page.save_button, LEFT)


def _roles(page: UsersPage) -> dict[str, str]:
    return {
        page.model.index(r, 0).data(): page.model.index(r, 1).data()
        for r in range(page.model.rowCount())
    }


def test_an_admin_assigns_a_role_by_clicking_and_the_roster_and_audit_trail_show_it(
    qtbot: QtBot, store: Store, open_as: OpenAs
) -> None:
    gui = open_as("ada")
    page = _users(qtbot, gui)
    assert page.form.isEnabled() and "No admin is assigned yet" in page.who.text()

    _assign(qtbot, page, "ada", "admin", "the lab's admin")  # the first admin: anyone may
    qtbot.waitUntil(lambda: _roles(page) == {"ada": "admin"}, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "(admin): you may assign" in page.who.text(), timeout=WAIT_MS)
    _assign(qtbot, page, "Tom", "reviewer", "reviews the gait study")
    qtbot.waitUntil(lambda: _roles(page) == {"ada": "admin", "tom": "reviewer"}, timeout=WAIT_MS)
    assert page.message.text() == (
        "tom now has the reviewer role (was no role); kept in the audit trail as entry 2."
    )
    row = page.model.row_of("tom")
    assert row is not None
    assert [page.model.index(row, c).data() for c in (2, 4)] == ["ada", "reviews the gait study"]

    gui.window.show_page("audit")
    audit = gui.window.pages.currentWidget()
    assert isinstance(audit, AuditPage)
    qtbot.waitUntil(lambda: len(audit.model.rows) == 2, timeout=WAIT_MS)
    newest = audit.model.rows[0]
    assert (newest.action, newest.object_id, newest.actor) == ("roles.set", "tom", "ada")
    assert newest.reason == "reviews the gait study"


def test_a_non_admin_reads_the_roster_only_and_a_refusal_is_shown_in_its_words(
    qtbot: QtBot, store: Store, open_as: OpenAs
) -> None:
    ada = as_user(store, "ada")
    ada.set_role("ada", "admin", "the lab's admin")
    ada.set_role("rita", "admin", "second admin")
    ada.set_role("tom", "technician", "bench technician")

    tom = _users(qtbot, open_as("tom"))
    assert not tom.form.isEnabled()
    assert tom.who.text() == (
        "Signed in as tom (the technician role). Only an admin (ada, rita) can change roles; "
        "ask one of them."
    )
    assert _roles(tom) == {"ada": "admin", "rita": "admin", "tom": "technician"}

    # rita's page offers her the form; ada demotes her before she saves: the service refuses
    rita = _users(qtbot, open_as("rita"))
    assert rita.form.isEnabled()
    ada.set_role("rita", "reviewer", "back to reviewing")
    _assign(qtbot, rita, "tom", "reviewer", "promoted")
    qtbot.waitUntil(lambda: rita.message.text().startswith("Not saved"), timeout=WAIT_MS)
    assert rita.message.text().startswith("Not saved (LABRIG_ROLE_REQUIRED): assigning roles")
    assert "needs the admin role" in rita.message.text()
    qtbot.waitUntil(lambda: not rita.form.isEnabled(), timeout=WAIT_MS)  # re-read: no longer admin
    assert as_user(store, "tom").roster().users[-1].role == "technician"  # nothing changed
