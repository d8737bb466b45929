"""The Audit screen over a real store: the trail filtered by object, user and days, an entry in
full, and Verify chain on an intact trail and on one edited behind Labrig's back."""

from __future__ import annotations

import sqlite3
from datetime import date, timedelta
from pathlib import Path

from PySide6.QtCore import QDate, Qt
from pytestqt.qtbot import QtBot

from labrig.access import AccessControl
from labrig.bootstrap import Services
from labrig.store import Store
from labrig.store.dialects import drop_append_only_ddl
from labrig.ui.app import Gui
from labrig.ui.audit.page import AuditPage
from tests.ui.analysis_helpers import click_row

LEFT = Qt.MouseButton.LeftButton
WAIT_MS = 10_000


def as_user(store: Store, user: str) -> AccessControl:
    return AccessControl(store, user=lambda: user, host=lambda: "bench-1")


def _trail(services: Services, tmp_path: Path) -> None:
    """Five entries: the sync destination (before any admin, by whoever runs the tests), then ada
    makes the roles and rita removes tom's."""
    archive = tmp_path / "archive"
    archive.mkdir()
    services.sync.configure(archive, "the lab's share")  # 1
    ada, rita = as_user(services.store, "ada"), as_user(services.store, "rita")
    ada.set_role("ada", "admin", "the lab's admin")  # 2
    ada.set_role("rita", "admin", "second admin")  # 3
    ada.set_role("tom", "technician", "bench technician")  # 4
    rita.set_role("tom", "none", "left the lab")  # 5


def _page(qtbot: QtBot, ui: Gui) -> AuditPage:
    ui.window.resize(1280, 800)
    ui.window.show()
    ui.window.show_page("audit")
    page = ui.window.pages.currentWidget()
    assert isinstance(page, AuditPage)
    qtbot.waitUntil(lambda: not page.busy, timeout=WAIT_MS)
    return page


def _listed(page: AuditPage) -> list[int]:
    return [row.seq for row in page.model.rows]


def _settle(qtbot: QtBot, page: AuditPage, seqs: list[int]) -> None:
    qtbot.waitUntil(lambda: not page.busy and _listed(page) == seqs, timeout=WAIT_MS)


def _qdate(day: date) -> QDate:
    return QDate(day.year, day.month, day.day)


def test_the_trail_is_filtered_by_object_user_and_days_and_an_entry_shown_in_full(
    qtbot: QtBot, ui: Gui, services: Services, tmp_path: Path
) -> None:
    _trail(services, tmp_path)
    page = _page(qtbot, ui)
    _settle(qtbot, page, [5, 4, 3, 2, 1])
    assert page.list_status.text() == "5 entries, newest first."

    page.object_type.setCurrentText("user")
    _settle(qtbot, page, [5, 4, 3, 2])
    qtbot.keyClicks(page.object_id, "TO")  # part of the id, in any case
    _settle(qtbot, page, [5, 4])
    qtbot.keyClicks(page.actor, "rita")
    _settle(qtbot, page, [5])
    assert page.list_status.text() == "1 entry match the filters, newest first."
    click_row(qtbot, page.table, 0)
    qtbot.waitUntil(lambda: "Why: left the lab" in page.detail.toPlainText(), timeout=WAIT_MS)
    assert "Who: rita on bench-1" in page.detail.toPlainText()
    assert '"previous_role": "technician"' in page.detail.toPlainText()

    qtbot.mouseClick(page.clear_button, LEFT)
    _settle(qtbot, page, [5, 4, 3, 2, 1])
    page.object_type.setCurrentText("sync_destination")
    _settle(qtbot, page, [1])
    page.object_type.setCurrentIndex(0)
    today = date.today()
    page.since.setDate(_qdate(today - timedelta(days=10)))
    page.until.setDate(_qdate(today - timedelta(days=1)))
    page.dated.setChecked(True)
    _settle(qtbot, page, [])
    assert page.list_status.text() == "No entry matches these filters."
    page.until.setDate(_qdate(today))
    _settle(qtbot, page, [5, 4, 3, 2, 1])

    page.since.setDate(_qdate(today + timedelta(days=1)))  # after the last day
    _settle(qtbot, page, [])
    assert "is after the last day" in page.list_status.text()


def test_verify_chain_says_intact_with_the_count_then_names_an_entry_edited_behind_labrigs_back(
    qtbot: QtBot, ui: Gui, services: Services, tmp_path: Path
) -> None:
    _trail(services, tmp_path)
    page = _page(qtbot, ui)
    qtbot.mouseClick(page.verify_button, LEFT)
    qtbot.waitUntil(lambda: page.verdict.text().startswith("Chain intact"), timeout=WAIT_MS)
    assert "5 entries verified; the newest is entry 5" in page.verdict.text()

    # someone with the database file drops the append-only triggers and rewrites a reason
    attacker = sqlite3.connect(services.store.db_path, isolation_level=None)
    try:
        for statement in drop_append_only_ddl("sqlite", ["audit_entries"]):
            attacker.execute(statement)
        attacker.execute("UPDATE audit_entries SET reason = 'promoted' WHERE seq = 4")
    finally:
        attacker.close()

    qtbot.mouseClick(page.verify_button, LEFT)
    qtbot.waitUntil(lambda: page.verdict.text().startswith("Chain BROKEN"), timeout=WAIT_MS)
    verdict = page.verdict.text()
    assert verdict.startswith("Chain BROKEN at entry 4 (roles.set on user tom, ")
    assert "by ada): its content does not match its hash" in verdict
    assert "restore from a backup" in verdict
