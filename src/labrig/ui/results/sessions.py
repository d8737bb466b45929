"""The Results screen's sessions: every capture session a page at a time, newest first, each with
its subject, protocol, operator, when it began and its number of attempts, found by the start of a
subject code, protocol or operator and by period. Choosing one (double-click, Enter or "Show its
attempts") lists that session's attempts on the Results screen.

Threading contract: GUI thread only. The page of sessions is read on a pool thread, when the dialog
is first shown and whenever its search, period or page changes; a read overtaken by a newer one is
dropped (:class:`~labrig.ui.shell.latest.Latest`).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, Signal, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from labrig.capture.session_listing import SessionQuery, SessionRow
from labrig.ui.common.browse_bar import BrowseBar, PageOfRows, period_start
from labrig.ui.common.rows_model import RowsTableModel
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.latest import Latest

#: sessions the dialog lists on one page
SESSION_PAGE = 100
#: a page of sessions and how many there are, for a query
ReadSessions = Callable[[SessionQuery], tuple[list[SessionRow], int]]


def session_words(row: SessionRow) -> str:
    """A session as the Results screen's filter names it: ``S0001 · gait, 3 Dec 2026``."""
    began = row.created_at.astimezone()
    return f"{row.subject_code} · {row.protocol}, {began.day} {began:%b %Y}"


class SessionsModel(RowsTableModel[SessionRow]):
    columns = ("Subject", "Protocol", "Operator", "Began", "Attempts")

    def key(self, row: SessionRow) -> str:
        return row.id

    def cells(self, row: SessionRow) -> tuple[str, ...]:
        began = row.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
        return (row.subject_code, row.protocol, row.operator, began, str(row.attempts))


class SessionsDialog(QDialog):
    """The sessions, a page at a time; :attr:`chosen` carries the one whose attempts to list."""

    chosen = Signal(object)  # SessionRow

    def __init__(self, read: ReadSessions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessionsDialog")
        self.setWindowTitle("Sessions")
        self._read = read
        self._calls = BackgroundCalls(1, self)
        self._reads = Latest(self._calls)  # a newer search or page overtakes an older read
        self.model = SessionsModel(self)
        self.browse = BrowseBar(SESSION_PAGE, "Subject, protocol or operator", what="sessions")
        self.browse.changed.connect(self.refresh)
        self.table = QTableView()
        self.table.setObjectName("sessionsTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.doubleClicked.connect(self._on_table_double_clicked)
        self.table.selectionModel().selectionChanged.connect(self._update_button)
        self.status = QLabel("Reading the sessions…")
        self.status.setObjectName("sessionsStatus")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.show_button = QPushButton("Show its attempts")
        self.show_button.setObjectName("showSessionAttempts")
        self.show_button.setDefault(True)
        self.show_button.setEnabled(False)
        buttons.addButton(self.show_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._choose)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browse)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self.resize(760, 520)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()

    @property
    def reading(self) -> bool:
        return self._reads.busy

    def refresh(self) -> None:
        """Read the page the search, period and page buttons ask for, on a pool thread."""
        read = self._read
        words, days, offset = self.browse.words, self.browse.days, self.browse.offset
        query = SessionQuery(
            words, period_start(days), newest_first=True, limit=SESSION_PAGE, offset=offset
        )
        self._reads.request(
            lambda: read(query),
            lambda found: self._show(PageOfRows(found[0], found[1], offset, words, days)),
            self._failed,
        )

    def _show(self, page: PageOfRows[SessionRow]) -> None:
        self.model.set_rows(page)
        self.status.setText(
            self.browse.status(
                page, "session", "sessions", "No sessions yet: start one on the Capture page."
            )
        )
        self._update_button()

    def _failed(self, error: Exception) -> None:
        self.status.setText(f"The sessions could not be read: {say_error(error)}")

    def selected(self) -> SessionRow | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.rows[rows[0].row()] if rows else None

    @Slot()
    def _update_button(self) -> None:
        self.show_button.setEnabled(self.selected() is not None)

    @Slot(QModelIndex)
    def _on_table_double_clicked(self, _index: QModelIndex) -> None:
        self._choose()

    @Slot()
    def _choose(self) -> None:
        row = self.selected()
        if row is None:
            return
        self.chosen.emit(row)
        self.accept()

    def shut_down(self, timeout_ms: int) -> None:
        self._calls.wait(timeout_ms)
