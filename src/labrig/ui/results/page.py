"""The Results page: every attempt with its result status; the selected one's plots,
metrics and provenance.

Threading contract: GUI thread only. The page never polls. It reads the store on a pool thread when
it is first shown and again whenever the :class:`~labrig.ui.shell.bridge.EventBridge` reports an
event that may change a status (an attempt created, a stage requested or finally failed, a quality
block, a result published); a hidden page only notes that it is stale and reads when next shown.
Newer reads overtake older ones (:class:`~labrig.ui.shell.latest.Latest`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from labrig.domain.events import EventName
from labrig.events import EventRecord
from labrig.export import ExportReport, ExportService
from labrig.results import AttemptSummary, refreshes_results
from labrig.review import ReviewedResults, Shown
from labrig.ui.common.list_detail import ListDetailPage, rows_word
from labrig.ui.common.result_view import ResultView
from labrig.ui.common.task_bar import TaskBar
from labrig.ui.results.model import AttemptResultsModel
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.bridge import EventBridge

LIST_WIDTH = 430  # px: subject, attempt, result and protocol fit without scrolling
Read = tuple[str, Shown]  # the attempt asked for, and what was read of it


class ResultsPage(ListDetailPage[AttemptSummary, Read]):
    """The attempt list on the left, the selected attempt's :class:`ResultView` on the right."""

    nothing_selected_text = "Select an attempt to see its result."
    reading_text = "Reading the result…"
    unlisted_text = "The selected attempt is no longer listed."
    list_noun, detail_noun = "results", "result"

    def __init__(
        self,
        results: ReviewedResults,
        export: ExportService,
        bridge: EventBridge,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(bridge, AttemptResultsModel(), "attemptTable", parent=parent)
        self._results = results
        self.detail = ResultView()
        self._export, self._exporting = export, BackgroundCalls(threads=1, parent=self)
        self._exportable: str | None = None  # the shown result, when it is published
        self.export_button = QPushButton("Export…")
        self.export_button.setObjectName("exportButton")
        self.export_button.setToolTip(
            "Write this result (CSV, JSON, plots, provenance, SHA256SUMS) into a folder"
        )
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._choose_export_folder)
        self.export_message = QLabel("")
        self.export_message.setObjectName("exportMessage")
        self.export_message.setWordWrap(True)
        self.export_message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.export_progress = TaskBar("exportTask")
        self._lay_out()

    def _lay_out(self) -> None:
        right = QWidget()
        detail_column = QVBoxLayout(right)
        detail_column.setContentsMargins(0, 0, 0, 0)
        detail_column.addWidget(self.detail, 1)
        export_row = QHBoxLayout()
        export_row.addWidget(self.export_button)
        export_row.addWidget(self.export_message, 1)
        detail_column.addLayout(export_row)
        detail_column.addWidget(self.export_progress)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("resultsSplitter")  # positions kept between runs by name
        split.addWidget(self.list_column())
        split.addWidget(right)
        split.setStretchFactor(1, 3)
        split.setSizes([LIST_WIDTH, 3 * LIST_WIDTH])
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Results</h2>"))
        layout.addWidget(split, 1)

    @property
    def reading(self) -> bool:
        """A read of the list or of a result is running or queued."""
        return self.list_busy

    def shut_down(self, timeout_ms: int) -> None:
        """Wait for running reads and an export, so none outlives the store."""
        super().shut_down(timeout_ms)
        self._exporting.wait(timeout_ms)

    # -- export ----------------------------------------------------------------------------------

    def _choose_export_folder(self) -> None:
        dialog = QFileDialog(self, "Export the result into a folder")
        dialog.setObjectName("exportDialog")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        # the same dialog on every platform
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.export_to)
        dialog.open()  # window-modal, no nested event loop

    def export_to(self, folder: str) -> None:
        """Export the shown result into ``folder`` off the GUI thread (the reviewer role is the
        service's check)."""
        result_id = self._exportable
        if result_id is None or self.export_progress.running:
            return
        self.export_button.setEnabled(False)
        self.export_message.setText("")
        task = self.export_progress.begin(f"Exporting into {folder}")
        self._exporting.submit(
            lambda: self._export.export([result_id], Path(folder), task=task),
            self._exported,
            self._export_failed,
        )

    def _exported(self, report: ExportReport) -> None:
        self.export_progress.end()
        self.export_button.setEnabled(self._exportable is not None)
        self.export_message.setText(
            f"Exported {report.files} files to {report.bundle}. To check it later: "
            f'cd "{report.bundle}" && sha256sum -c --strict SHA256SUMS'
        )

    def _export_failed(self, error: Exception) -> None:
        self.export_progress.end()
        self.export_button.setEnabled(self._exportable is not None)
        self.export_message.setText(f"Not exported: {say_error(error)}")

    # -- the list and the detail -------------------------------------------------------------------

    def read_list(self) -> list[AttemptSummary]:
        return self._results.attempts()

    def read_detail(self, key: str) -> Read:
        return key, self._results.attempt_result(key)

    def detail_key(self, detail: Read) -> str:
        return detail[0]

    def show_detail(self, detail: Read) -> None:
        shown, revised = detail[1]
        if shown is None:
            self.detail.show_message("This attempt is not in the store any more.")
            return
        self.detail.show_result(shown, revised)
        published = shown.document is not None and shown.document.get("status") == "published"
        self._exportable = shown.summary.result_id if published else None
        self.export_button.setEnabled(
            self._exportable is not None and not self.export_progress.running
        )

    def show_placeholder(self, text: str) -> None:
        self.detail.show_message(text)

    def describe_list(self, rows: list[AttemptSummary]) -> str:
        return (
            f"{rows_word(len(rows), 'attempt')}, newest first."
            if rows
            else "No attempts yet: record one on the Capture page."
        )

    def refreshes(self, event: EventRecord) -> bool:
        return refreshes_results(event.name, event.payload)

    def on_event(self, event: EventRecord) -> None:
        shown = self.detail.current
        if (
            event.name == EventName.REVIEW_REVISED
            and shown is not None
            and shown.summary.result_id == event.payload.get("result_id")
        ):
            # its revised values changed; the list did not
            self.request_detail(shown.summary.attempt_id)
