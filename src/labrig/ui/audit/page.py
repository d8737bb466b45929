"""The Audit page: the audit trail filtered by object, user and days, one entry in full, and
verifying the hash chain.

Threading contract: GUI thread only. The list, an entry and the verification are read on the page's
pool threads (:class:`~labrig.ui.shell.background.BackgroundCalls`); the page never polls. The list
is read when the page is shown, when a filter changes, and when the bridge reports an event that
comes with an audit entry (a revision, a release activated or rolled back). Verifying is the audit
service's own (:meth:`~labrig.events.audit.AuditTrail.verify`); the page only names what it found.
"""

from __future__ import annotations

from PySide6.QtCore import QDate, Qt, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from labrig.domain.audit import ChainReport
from labrig.domain.events import EventName
from labrig.errors import LabrigError
from labrig.events import AuditEntryView, AuditQuery, AuditTrail, EventRecord
from labrig.ui.audit.model import OBJECT_TYPES, AuditListModel, detail_text, local_second
from labrig.ui.common.list_detail import ListDetailPage
from labrig.ui.common.widgets import message_label, named_button
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.bridge import EventBridge

INTRO = (
    "Every change to results, roles, releases and the sync destination is kept here: who made it, "
    "when, on which workstation, why, and what changed. Entries are never changed nor removed, and "
    "each is linked to the one before by a hash, so Verify chain finds an entry edited outside "
    "Labrig."
)
ANY_TYPE = "any object"
DETAIL_WIDTH = 220  # px per share of the list (3) and the detail (2) at first
REFRESHING = frozenset(
    {EventName.REVIEW_REVISED, EventName.DEPLOYMENT_ACTIVATED, EventName.DEPLOYMENT_ROLLEDBACK}
)
Verified = tuple[ChainReport, AuditEntryView | None]


def entries_word(count: int) -> str:
    return f"{count} {'entry' if count == 1 else 'entries'}"


def verdict(report: ChainReport, broken: AuditEntryView | None) -> str:
    """What Verify chain says: intact with the count, or the first broken entry named."""
    if report.intact:
        return (
            f"Chain intact: {entries_word(report.entries)} verified; the newest is entry "
            f"{report.head.seq} (hash {report.head.entry_hash[:16]}…)."
        )
    what = (
        f" ({broken.action} on {broken.object_type} {broken.object_id}, "
        f"{local_second(broken.recorded_at)}, by {broken.actor})"
        if broken is not None
        else ""
    )
    return (
        f"Chain BROKEN at entry {report.first_broken}{what}: {report.problem}. Entries before it "
        "verify. Keep this database as evidence and restore from a backup."
    )


class AuditPage(ListDetailPage[AuditEntryView, AuditEntryView]):
    """The filters above, the entries on the left, the selected one on the right, Verify below."""

    nothing_selected_text = "Select an entry to see everything it holds."
    reading_text = "Reading the entry…"
    unlisted_text = "The selected entry is not listed under these filters."
    list_noun, detail_noun = "audit entries", "entry"

    def __init__(
        self, audit: AuditTrail, bridge: EventBridge, parent: QWidget | None = None
    ) -> None:
        super().__init__(bridge, AuditListModel(), "auditEntries", "auditListStatus", parent)
        self._audit = audit
        self._query = AuditQuery()
        self._verifies = BackgroundCalls(threads=1, parent=self)
        self._build_filters()
        self.detail = QPlainTextEdit()
        self.detail.setObjectName("auditDetail")
        self.detail.setReadOnly(True)
        self.detail.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.verify_button = named_button("verifyChain", "Verify chain", self._verify)
        self.verdict = message_label("chainVerdict", "The chain has not been verified yet.")
        self._lay_out()
        self.show_placeholder(self.nothing_selected_text)

    def _build_filters(self) -> None:
        self.object_type = QComboBox()
        self.object_type.setObjectName("objectType")
        self.object_type.addItems([ANY_TYPE, *OBJECT_TYPES])
        self.object_id = QLineEdit()
        self.object_id.setObjectName("objectId")
        self.object_id.setPlaceholderText("object id (or part of it)")
        self.actor = QLineEdit()
        self.actor.setObjectName("actor")
        self.actor.setPlaceholderText("login")
        self.dated = QCheckBox("Between")
        self.dated.setObjectName("dated")
        today = QDate.currentDate()
        self.since, self.until = QDateEdit(today.addDays(-30)), QDateEdit(today)
        for edit, name in ((self.since, "since"), (self.until, "until")):
            edit.setObjectName(name)
            edit.setCalendarPopup(True)
            edit.setDisplayFormat("yyyy-MM-dd")
            edit.dateChanged.connect(self._on_filter_changed)
        self.object_type.currentIndexChanged.connect(self._on_filter_changed)
        self.object_id.textChanged.connect(self._on_filter_changed)
        self.actor.textChanged.connect(self._on_filter_changed)
        self.dated.toggled.connect(self._on_filter_changed)
        self.clear_button = named_button("clearFilters", "Show all", self._clear_filters)

    def _lay_out(self) -> None:
        filters = QHBoxLayout()
        for widget in (
            QLabel("Object"),
            self.object_type,
            self.object_id,
            QLabel("User"),
            self.actor,
            self.dated,
            self.since,
            QLabel("and"),
            self.until,
            self.clear_button,
        ):
            filters.addWidget(widget)
        filters.setStretchFactor(self.object_id, 2)
        filters.setStretchFactor(self.actor, 1)
        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(self.list_column())
        sides.addWidget(self.detail)
        sides.setStretchFactor(0, 3)
        sides.setStretchFactor(1, 2)
        sides.setSizes([3 * DETAIL_WIDTH, 2 * DETAIL_WIDTH])
        self.table.setWordWrap(False)  # one line an entry; the detail has the whole reason
        verify = QHBoxLayout()
        verify.addWidget(self.verify_button, 0, Qt.AlignmentFlag.AlignTop)
        verify.addWidget(self.verdict, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Audit trail</h2>"))
        layout.addWidget(message_label("auditIntro", INTRO))
        layout.addLayout(filters)
        layout.addWidget(sides, 1)
        layout.addLayout(verify)

    # -- reading -------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.list_busy or self._verifies.busy

    def refresh(self) -> None:
        """Read the entries the filters match (off the GUI thread); bad filters are said instead."""
        try:
            self._query = self._form_query()
        except LabrigError as error:
            self.model.set_rows([])
            self.list_status.setText(f"Nothing listed: {error.message}.")
            return
        super().refresh()

    def _form_query(self) -> AuditQuery:
        kind = self.object_type.currentText()
        dated = self.dated.isChecked()
        return AuditQuery(
            object_type=None if kind == ANY_TYPE else kind,
            object_id=self.object_id.text().strip() or None,
            actor=self.actor.text().strip() or None,
            since=self.since.date().toPython() if dated else None,  # type: ignore[arg-type]
            until=self.until.date().toPython() if dated else None,  # type: ignore[arg-type]
        )

    def read_list(self) -> list[AuditEntryView]:
        return self._audit.find(self._query)

    def read_detail(self, key: str) -> AuditEntryView:
        entry = self._audit.entry(int(key))
        if entry is None:
            raise LookupError(f"entry {key} is no longer in the trail")
        return entry

    def detail_key(self, detail: AuditEntryView) -> str:
        return str(detail.seq)

    def show_detail(self, detail: AuditEntryView) -> None:
        self.detail.setPlainText(detail_text(detail))

    def show_placeholder(self, text: str) -> None:
        self.detail.setPlainText(text)

    def describe_list(self, rows: list[AuditEntryView]) -> str:
        filtered = self._query != AuditQuery()
        if not rows:
            return (
                "No entry matches these filters."
                if filtered
                else "The audit trail is empty: it grows as results are revised, roles assigned, "
                "releases activated and sync configured."
            )
        return f"{entries_word(len(rows))}{' match the filters' if filtered else ''}, newest first."

    def refreshes(self, event: EventRecord) -> bool:
        return event.name in REFRESHING

    def on_shown_fresh(self) -> None:
        self.refresh()  # role and sync changes come with no event: read again when shown

    def shut_down(self, timeout_ms: int) -> None:
        self._verifies.wait(timeout_ms)
        super().shut_down(timeout_ms)

    # -- acting --------------------------------------------------------------------------------

    @Slot()
    def _on_filter_changed(self) -> None:
        self.refresh()

    def _clear_filters(self) -> None:
        for widget in (self.object_type, self.object_id, self.actor, self.dated):
            widget.blockSignals(True)
        self.object_type.setCurrentIndex(0)
        self.object_id.clear()
        self.actor.clear()
        self.dated.setChecked(False)
        for widget in (self.object_type, self.object_id, self.actor, self.dated):
            widget.blockSignals(False)
        self.refresh()

    def _verify(self) -> None:
        if self._verifies.busy:
            return
        self.verify_button.setEnabled(False)
        self.verdict.setText("Verifying the chain: recomputing every entry's hash…")
        self._verifies.submit(self._read_verdict, self._on_verified, self._on_verify_failed)

    def _read_verdict(self) -> Verified:
        """Runs on a pool thread: the service's verification, and the broken entry as stored."""
        report = self._audit.verify()
        broken = self._audit.entry(report.first_broken) if report.first_broken else None
        return report, broken

    def _on_verified(self, verified: Verified) -> None:
        self.verify_button.setEnabled(True)
        self.verdict.setText(verdict(*verified))
        self.verdict.setProperty("intact", verified[0].intact)

    def _on_verify_failed(self, error: Exception) -> None:
        self.verify_button.setEnabled(True)
        self.verdict.setText(f"The chain could not be verified: {say_error(error)}")
