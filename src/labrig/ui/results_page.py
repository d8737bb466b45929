"""The Results page: every attempt with its result status; the selected one's plots, metrics and provenance.

Threading contract: GUI thread only. The page never polls. It reads the store on a pool thread when it is first
shown and again whenever the :class:`~labrig.ui.bridge.EventBridge` reports an event that may change a status
(an attempt created, a stage requested or finally failed, a quality block, a result published); a hidden page only
notes that it is stale and reads when next shown. Newer reads overtake older ones (:class:`~labrig.ui.latest.Latest`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QItemSelection, Qt, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from labrig.bootstrap import Services
from labrig.domain.events import EventName
from labrig.events import EventRecord
from labrig.export import ExportReport
from labrig.results import AttemptSummary, ResultDetail, list_attempts, load_result, refreshes_results
from labrig.review import RevisedValue, RevisionService, read_revised
from labrig.store import Store
from labrig.ui.background import BackgroundCalls, say_error
from labrig.ui.bridge import EventBridge
from labrig.ui.latest import Latest
from labrig.ui.result_view import ResultView
from labrig.ui.results_model import AttemptResultsModel
from labrig.ui.rows_model import rows_table, select_key, selected_key

LIST_WIDTH = 430  # px: subject, attempt, result and protocol fit without scrolling
Shown = tuple[ResultDetail | None, dict[str, RevisedValue]]


def load_shown(store: Store, revisions: RevisionService, attempt_id: str) -> Shown:
    """The attempt's result and the values reviewers revised in it. Blocking: runs on a pool thread."""
    detail = load_result(store, attempt_id)
    result_id = detail.summary.result_id if detail is not None and detail.document is not None else None
    return detail, read_revised(revisions, result_id)


class ResultsPage(QWidget):
    """The attempt list on the left, the selected attempt's :class:`ResultView` on the right."""

    def __init__(self, services: Services, bridge: EventBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._store, self._revisions = services.store, services.governance.revisions
        self._calls = BackgroundCalls(threads=2, parent=self)
        self._list_reads, self._detail_reads = Latest(self._calls), Latest(self._calls)
        self._stale = True  # read the list when next shown
        self.model = AttemptResultsModel(self)
        self.table = rows_table(self.model, "attemptTable")
        self.list_status = QLabel("")
        self.list_status.setObjectName("listStatus")
        self.list_status.setWordWrap(True)
        self.detail = ResultView()
        self._export, self._exporting = services.export, BackgroundCalls(threads=1, parent=self)
        self._exportable: str | None = None  # the shown result, when it is published
        self.export_button = QPushButton("Export…")
        self.export_button.setObjectName("exportButton")
        self.export_button.setToolTip("Write this result (CSV, JSON, plots, provenance, SHA256SUMS) into a folder")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._choose_export_folder)
        self.export_message = QLabel("")
        self.export_message.setObjectName("exportMessage")
        self.export_message.setWordWrap(True)
        self.export_message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._lay_out()
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        bridge.eventRecorded.connect(self._on_bridge_event_recorded)

    def _lay_out(self) -> None:
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.table, 1)
        column.addWidget(self.list_status)
        right = QWidget()
        detail_column = QVBoxLayout(right)
        detail_column.setContentsMargins(0, 0, 0, 0)
        detail_column.addWidget(self.detail, 1)
        export_row = QHBoxLayout()
        export_row.addWidget(self.export_button)
        export_row.addWidget(self.export_message, 1)
        detail_column.addLayout(export_row)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(1, 3)
        split.setSizes([LIST_WIDTH, 3 * LIST_WIDTH])
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Results</h2>"))
        layout.addWidget(split, 1)

    @property
    def reading(self) -> bool:
        """A read of the list or of a result is running or queued."""
        return self._list_reads.busy or self._detail_reads.busy

    def refresh(self) -> None:
        """Read the attempt list again (off the GUI thread)."""
        self._stale = False
        self._list_reads.request(partial(list_attempts, self._store), self._on_attempts_read, self._on_list_failed)

    def shut_down(self, timeout_ms: int) -> None:
        """Wait for running reads and an export, so none outlives the store."""
        self._calls.wait(timeout_ms)
        self._exporting.wait(timeout_ms)

    # -- export ----------------------------------------------------------------------------------

    def _choose_export_folder(self) -> None:
        dialog = QFileDialog(self, "Export the result into a folder")
        dialog.setObjectName("exportDialog")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)  # the same dialog on every platform
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.export_to)
        dialog.open()  # window-modal, no nested event loop

    def export_to(self, folder: str) -> None:
        """Export the shown result into ``folder`` off the GUI thread (the reviewer role is the service's check)."""
        result_id = self._exportable
        if result_id is None or self._exporting.busy:
            return
        self.export_button.setEnabled(False)
        self.export_message.setText("Exporting…")
        self._exporting.submit(lambda: self._export.export([result_id], Path(folder)), self._exported,
                               self._export_failed)

    def _exported(self, report: ExportReport) -> None:
        self.export_button.setEnabled(self._exportable is not None)
        self.export_message.setText(f"Exported {report.files} files to {report.bundle}. To check it later: "
                                    f"cd \"{report.bundle}\" && sha256sum -c --strict SHA256SUMS")

    def _export_failed(self, error: Exception) -> None:
        self.export_button.setEnabled(self._exportable is not None)
        self.export_message.setText(f"Not exported: {say_error(error)}")

    def selected_attempt_id(self) -> str | None:
        return selected_key(self.table, self.model)

    def select_attempt(self, attempt_id: str) -> bool:
        """Select ``attempt_id``'s row; False when the list does not show it."""
        return select_key(self.table, self.model, attempt_id)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    @Slot(object)
    def _on_bridge_event_recorded(self, event: EventRecord) -> None:
        shown = self.detail.current
        if event.name == EventName.REVIEW_REVISED and shown is not None \
                and shown.summary.result_id == event.payload.get("result_id"):
            self._read_detail(shown.summary.attempt_id)  # its revised values changed; the list did not
        if not refreshes_results(event.name, event.payload):
            return
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def _on_attempts_read(self, attempts: list[AttemptSummary]) -> None:
        selected = self.selected_attempt_id()
        before = self.model.find(selected) if selected else None
        selection = self.table.selectionModel()
        selection.blockSignals(True)  # a re-read is not a new choice: the detail is read again only if it changed
        try:
            self.model.set_rows(attempts)
            still_listed = selected is not None and self.select_attempt(selected)
        finally:
            selection.blockSignals(False)
        self.table.viewport().update()
        count = f"{len(attempts)} attempt" + ("s" if len(attempts) != 1 else "")
        self.list_status.setText(f"{count}, newest first." if attempts
                                 else "No attempts yet: record one on the Capture page.")
        if selected is not None and not still_listed:
            self.detail.show_message("The selected attempt is no longer listed.")
        elif selected is not None and self.model.find(selected) != before:
            self._read_detail(selected)

    def _on_list_failed(self, error: Exception) -> None:
        self.list_status.setText(f"The results could not be read: {say_error(error)}")

    @Slot(QItemSelection, QItemSelection)
    def _on_table_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        attempt_id = self.selected_attempt_id()
        if attempt_id is None:
            self.detail.show_message("Select an attempt to see its result.")
            return
        self.detail.show_message("Reading the result…")
        self._read_detail(attempt_id)

    def _read_detail(self, attempt_id: str) -> None:
        self._detail_reads.request(partial(load_shown, self._store, self._revisions, attempt_id),
                                   self._on_result_read, self._on_result_failed)

    def _on_result_read(self, shown: Shown) -> None:
        detail, revised = shown
        if detail is None:
            self.detail.show_message("This attempt is not in the store any more.")
        elif detail.summary.attempt_id == self.selected_attempt_id():  # else the selection moved on meanwhile
            self.detail.show_result(detail, revised)
            published = detail.document is not None and detail.document.get("status") == "published"
            self._exportable = detail.summary.result_id if published else None
            self.export_button.setEnabled(self._exportable is not None and not self._exporting.busy)

    def _on_result_failed(self, error: Exception) -> None:
        self.detail.show_message(f"The result could not be read: {say_error(error)}")
