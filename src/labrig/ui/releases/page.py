"""The Releases page: analysis releases with their health, and the admin's register, check,
activate, roll back.

Threading contract: GUI thread only. Every service call (listing, registering,
the health check, which runs the whole pipeline on reference data, activating,
rolling back) runs on a pool thread through
:class:`~labrig.ui.shell.background.BackgroundCalls`. The list (with whether roles are enforced)
is read, newest wins, when the page is shown, when an action ends and when the bridge reports a
deployment event; its status line under the table says what was read, so the message about the
last action is never overwritten by a read. Role checks are the service's: a refusal is shown in
its own words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from labrig.access import AccessControl
from labrig.domain.events import EventName
from labrig.events import EventRecord
from labrig.releases import HealthReport, ReleaseService, ReleaseView
from labrig.ui.common.list_detail import rows_word
from labrig.ui.common.roles_policy import RolesPolicyBanner
from labrig.ui.common.widgets import message_label, named_button
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.latest import Latest

T = TypeVar("T")
COLUMNS = ("Version", "Status", "Health", "Digest", "Activated", "Note")
INTRO = (
    "A release is the analysis pipeline of a Labrig build: its stages, their versions and "
    "parameters. Its digest enters every analysis job's key, so results always say which release "
    "made them. A release must pass its health check (the pipeline on reference recordings with "
    "known truth) before it can be activated. Activating and rolling back need the admin role and "
    "are kept in the audit trail."
)
READING = "Reading the releases…"
EMPTY = (
    "No release is registered yet. Registering records this build's analysis pipeline as a "
    'release, so that results can say which checked pipeline made them: press "Register this '
    "build's pipeline\", run its health check, then activate it (admin)."
)
NO_ACTIVE = (
    "No release is active. Analysis still runs this build's built-in stages and results are still "
    'published, but each is marked "No active release" on the Results screen and in its '
    "provenance: it was not made under a health-checked, activated release. Activate a release so "
    "that new results carry it; results made before keep the mark until they are reprocessed."
)


def health_text(release: ReleaseView) -> str:
    if release.health is None:
        return "not checked"
    return "passed" if release.health.get("passed") else "FAILED"


class ReleasesPage(QWidget):
    """The release table, a reason field, and one button per action on the selected release."""

    def __init__(
        self,
        releases: ReleaseService,
        access: AccessControl,
        bridge: EventBridge,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._releases, self._access = releases, access
        self._calls = BackgroundCalls(1, self)  # the actions, one at a time
        self._reads = BackgroundCalls(1, self)  # the list, never queued behind a health check
        self._list_reads = Latest(self._reads)
        self._rows: list[ReleaseView] = []
        self._select_after: str | None = None
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Releases</h2>"))
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.policy = RolesPolicyBanner()
        layout.addWidget(self.policy)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("releaseTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.itemSelectionChanged.connect(lambda: self._sync_buttons())
        layout.addWidget(self.table, 1)
        self.list_status = message_label("releaseListStatus", READING)
        layout.addWidget(self.list_status)
        self.no_active = message_label("noActiveRelease", NO_ACTIVE)
        self.no_active.hide()
        layout.addWidget(self.no_active)
        self.reason = QLineEdit()
        self.reason.setObjectName("reason")
        self.reason.setPlaceholderText("Reason (required to roll back; kept in the audit trail)")
        self.reason.textChanged.connect(lambda _text: self._sync_buttons())
        layout.addWidget(self.reason)
        buttons = QHBoxLayout()
        self.register_button = named_button(
            "registerButton", "Register this build's pipeline", self._register
        )
        self.check_button = named_button("checkButton", "Run health check", self._check)
        self.activate_button = named_button("activateButton", "Activate", self._activate)
        self.rollback_button = named_button(
            "rollbackButton", "Roll back the active release", self._rollback
        )
        for button in (
            self.register_button,
            self.check_button,
            self.activate_button,
            self.rollback_button,
        ):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.message = QLabel("")
        self.message.setObjectName("message")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        self.report = QLabel("")
        self.report.setObjectName("healthReport")
        self.report.setWordWrap(True)
        layout.addWidget(self.report)
        bridge.eventRecorded.connect(self._on_bridge_event_recorded)
        self._sync_buttons()

    # -- reading -------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._calls.busy or self._list_reads.busy

    @property
    def releases(self) -> list[ReleaseView]:
        return list(self._rows)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()  # also when current: roles may have changed on another screen or the CLI

    def refresh(self, select_id: str | None = None) -> None:
        """Read the list and the roster again (off the GUI thread); then select ``select_id``."""
        self._select_after = select_id or self._select_after
        if not self._rows:
            self.list_status.setText(READING)
        self._list_reads.request(self._read, self._on_read, self._on_read_failed)

    def _read(self) -> tuple[list[ReleaseView], bool]:
        """Runs on a pool thread."""
        return self._releases.list(), self._access.roster().enforced

    def _on_read(self, read: tuple[list[ReleaseView], bool]) -> None:
        releases, enforced = read
        self.policy.show_policy(enforced)
        self._show_list(releases)
        wanted, self._select_after = self._select_after, None
        if wanted is not None:
            self.select(wanted)
        self.list_status.setText(
            f"{rows_word(len(releases), 'release')}, newest first." if releases else EMPTY
        )
        self.no_active.setHidden(any(r.status == "active" for r in releases))

    def _on_read_failed(self, error: Exception) -> None:
        self.list_status.setText(f"The releases could not be read: {say_error(error)}")

    def _show_list(self, releases: list[ReleaseView]) -> None:
        selected = self.selected()
        self._rows = list(reversed(releases))  # newest first
        self.table.setRowCount(len(self._rows))
        for row, release in enumerate(self._rows):
            cells = (
                release.version,
                release.status,
                health_text(release),
                release.digest[:12] + "…",
                (release.activated_at or "")[:19].replace("T", " "),
                release.note or "",
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(release.digest if column == 3 else text)
                self.table.setItem(row, column, item)
        if selected is not None:
            self.select(selected.id)
        self._sync_buttons()

    def selected(self) -> ReleaseView | None:
        rows = self.table.selectionModel().selectedRows()
        return self._rows[rows[0].row()] if rows and rows[0].row() < len(self._rows) else None

    def select(self, release_id: str) -> bool:
        for row, release in enumerate(self._rows):
            if release.id == release_id:
                self.table.selectRow(row)
                return True
        return False

    # -- actions -------------------------------------------------------------------------------

    def _register(self) -> None:
        self._run("Registering this build's pipeline…", self._releases.register, self._registered)

    def _registered(self, release: ReleaseView) -> None:
        self.message.setText(
            f"Release {release.version} registered ({release.digest[:12]}…, {release.status}). "
            "Run its health check before activating it."
        )
        self._after_change(release.id)

    def _check(self) -> None:
        release = self.selected()
        if release is not None:
            self._run(
                f"Checking release {release.version} on reference recordings (about a minute)…",
                lambda: self._releases.check(release.id),
                lambda report: self._checked(release, report),
            )

    def _checked(self, release: ReleaseView, report: HealthReport) -> None:
        self.message.setText(
            f"Health check of {release.version} {'passed' if report.passed else 'FAILED'}: "
            f"{report.detail}"
        )
        self.report.setText(
            "\n".join(
                f"{'OK' if c.ok else 'FAIL'}  {c.name}: {c.measured:.3f} "
                f"(expected {c.expected:.3f} {c.tolerance})"
                for c in report.checks
            )
        )
        self._after_change(release.id)

    def _activate(self) -> None:
        release = self.selected()
        if release is not None:
            reason = self.reason.text().strip() or None
            self._run(
                f"Activating {release.version}…",
                lambda: self._releases.activate(release.id, reason),
                self._activated,
            )

    def _activated(self, release: ReleaseView) -> None:
        self.message.setText(
            f"Release {release.version} is active: new analysis jobs carry its digest "
            f"{release.digest[:12]}…. Results made before keep theirs; reprocess to use it."
        )
        self.reason.clear()
        self._after_change(release.id)

    def _rollback(self) -> None:
        reason = self.reason.text().strip()
        self._run("Rolling back…", lambda: self._releases.rollback(reason), self._rolled_back)

    def _rolled_back(self, restored: ReleaseView | None) -> None:
        self.message.setText(
            f"Rolled back; release {restored.version} is active again."
            if restored is not None
            else "Rolled back; no release is active now (jobs carry no release digest)."
        )
        self.reason.clear()
        self._after_change(restored.id if restored is not None else None)

    def _after_change(self, select_id: str | None) -> None:
        self.refresh(select_id)

    def _run(self, doing: str, call: Callable[[], T], done: Callable[[T], None]) -> None:
        if self._calls.busy:
            return
        self.message.setText(doing)
        self._sync_buttons(busy=True)

        def finish(value: T) -> None:
            done(value)
            self._sync_buttons()

        self._calls.submit(call, finish, self._failed)

    def _failed(self, error: Exception) -> None:
        self.message.setText(f"Not done: {say_error(error)}")
        self._sync_buttons()

    def _sync_buttons(self, busy: bool = False) -> None:
        busy = busy or self._calls.busy
        release = self.selected()
        any_active = any(r.status == "active" for r in self._rows)
        self.register_button.setEnabled(not busy)
        self.check_button.setEnabled(not busy and release is not None)
        self.activate_button.setEnabled(
            not busy
            and release is not None
            and release.status != "active"
            and health_text(release) == "passed"
        )
        self.rollback_button.setEnabled(
            not busy and any_active and bool(self.reason.text().strip())
        )

    @Slot(object)
    def _on_bridge_event_recorded(self, event: EventRecord) -> None:
        deployment = event.name in (EventName.DEPLOYMENT_ACTIVATED, EventName.DEPLOYMENT_ROLLEDBACK)
        if deployment and self.isVisible():  # a hidden page reads when next shown
            self.refresh()

    def shut_down(self, timeout_ms: int) -> None:
        self._calls.wait(timeout_ms)
        self._reads.wait(timeout_ms)
