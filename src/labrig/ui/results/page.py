"""The Results page: every attempt with its result status; the selected one's plots,
metrics and provenance.

Threading contract: GUI thread only. The page never polls. It reads the store on a pool thread when
it is first shown and again whenever the :class:`~labrig.ui.shell.bridge.EventBridge` reports an
event that may change a status (an attempt created, a stage requested or finally failed, a quality
block, a result published); a hidden page only notes that it is stale and reads when next shown.
Newer reads overtake older ones (:class:`~labrig.ui.shell.latest.Latest`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
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
from labrig.review import Reprocessed, ReviewedResults, Shown
from labrig.ui.common.list_detail import ListDetailPage, rows_word
from labrig.ui.common.player import PlayerWidget
from labrig.ui.common.result_view import ResultView
from labrig.ui.common.task_bar import TaskBar
from labrig.ui.results.model import AttemptResultsModel
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.window_state import ui_settings

LIST_WIDTH = 430  # px: subject, attempt, result and protocol fit without scrolling
EXPORT_FOLDER_KEY = "export/folder"  # the folder the last export went to, kept per user
SHOWN, EVERYTHING = "shown", "everything"  # what to export
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
            "Write the results (CSV, C3D, TRC, NWB, JSON, plots, provenance, SHA256SUMS) into a "
            "folder"
        )
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._choose_export_folder)
        self.export_scope = QComboBox()
        self.export_scope.setObjectName("exportScope")
        self.export_scope.addItem("this result", SHOWN)
        self.export_scope.addItem("every published result", EVERYTHING)
        self.export_media = QCheckBox("with the recordings")
        self.export_media.setObjectName("exportMedia")
        self.export_media.setToolTip(
            "Also copy each result's committed recordings (media segments, timestamps and the "
            "manifest), each checked against its SHA-256"
        )
        self.export_message = QLabel("")
        self.export_message.setObjectName("exportMessage")
        self.export_message.setWordWrap(True)
        self.export_message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.export_progress = TaskBar("exportTask")
        self.detail.reprocess_button.clicked.connect(self.reprocess_shown)
        # the attempt's recording, frame by frame, with its tracks drawn (as on the Review page)
        self.player = PlayerWidget()
        self.detail.tabs.insertTab(1, self.player, "Recording")
        self.player.frame_shown.connect(self._on_frame_shown)
        self.detail.plots.time_cursor.clicked.connect(self._on_plot_clicked)
        self._lay_out()

    def _lay_out(self) -> None:
        right = QWidget()
        detail_column = QVBoxLayout(right)
        detail_column.setContentsMargins(0, 0, 0, 0)
        detail_column.addWidget(self.detail, 1)
        export_row = QHBoxLayout()
        export_row.addWidget(self.export_button)
        export_row.addWidget(self.export_scope)
        export_row.addWidget(self.export_media)
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
        """Wait for running reads, the player's decoding and an export, so none outlives the
        store."""
        self.player.shut_down(timeout_ms)
        super().shut_down(timeout_ms)
        self._exporting.wait(timeout_ms)

    # -- the recording ---------------------------------------------------------------------------

    def _read_media(self, result_id: str | None, keep_frame: bool) -> None:
        """The shown result's recording and tracks for the player (nothing for no result)."""
        if result_id is None:
            self.player.set_media(None)
            return
        self.player.load(
            partial(self._results.media, result_id),
            keep_frame=keep_frame,
            wanted=lambda media: self._exportable == media.result_id,
        )

    @Slot(int)
    def _on_frame_shown(self, index: int) -> None:
        if self.player.media is not None and self.player.media.curves is not None:
            self.detail.plots.set_time(self.player.media.time_of(index))

    @Slot(float)
    def _on_plot_clicked(self, t: float) -> None:
        """A click on the speed plot: the recording at that time."""
        if self.player.media is None:
            return
        self.player.pause()
        self.player.seek(self.player.media.frame_at_time(t))
        self.detail.tabs.setCurrentWidget(self.player)

    # -- export ----------------------------------------------------------------------------------

    @staticmethod
    def export_start_folder() -> str:
        """Where the folder dialog opens: the last export's folder, else the user's documents."""
        kept = ui_settings().value(EXPORT_FOLDER_KEY)
        if isinstance(kept, str) and Path(kept).is_dir():
            return kept
        documents = QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.DocumentsLocation
        )
        return documents if documents and Path(documents).is_dir() else str(Path.home())

    def _choose_export_folder(self) -> None:
        dialog = QFileDialog(self, "Export into a folder", self.export_start_folder())
        dialog.setObjectName("exportDialog")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        # the same dialog on every platform
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.export_to)
        dialog.open()  # window-modal, no nested event loop

    def export_to(self, folder: str) -> None:
        """Export the shown result, or every published one, with or without the recordings, into
        ``folder`` off the GUI thread (the reviewer role is the service's check)."""
        result_id = self._exportable
        if result_id is None or self.export_progress.running:
            return
        ui_settings().setValue(EXPORT_FOLDER_KEY, folder)
        everything = self.export_scope.currentData() == EVERYTHING
        media = self.export_media.isChecked()
        self.export_button.setEnabled(False)
        self.export_message.setText("")
        task = self.export_progress.begin(f"Exporting into {folder}")
        export = self._export
        self._exporting.submit(
            lambda: export.export(
                [] if everything else [result_id],
                Path(folder),
                everything=everything,
                media=media,
                task=task,
            ),
            self._exported,
            self._export_failed,
        )

    def _exported(self, report: ExportReport) -> None:
        self.export_progress.end()
        self.export_button.setEnabled(self._exportable is not None)
        self.export_message.setText(
            f"Exported {len(report.results)} result(s) in {report.files} files to "
            f"{report.bundle}. "
            "To check it later: "
            f'cd "{report.bundle}" && sha256sum -c --strict SHA256SUMS'
        )

    def _export_failed(self, error: Exception) -> None:
        self.export_progress.end()
        self.export_button.setEnabled(self._exportable is not None)
        self.export_message.setText(f"Not exported: {say_error(error)}")

    # -- reprocessing under the current calibration ----------------------------------------------

    def reprocess_shown(self) -> None:
        """Analyse the shown result's attempt again under the current calibrations, off the GUI
        thread; the new attempt appears in the list when it is created."""
        shown = self.detail.current
        result_id = shown.summary.result_id if shown is not None else None
        if result_id is None:
            return
        self.detail.reprocess_button.setEnabled(False)
        self.detail.reprocess_message.setText("Requesting the analysis…")
        results = self._results
        self._exporting.submit(
            lambda: results.reprocess(result_id), self._reprocessed, self._reprocess_failed
        )

    def _reprocessed(self, done: Reprocessed) -> None:
        self.detail.reprocess_message.setText(
            f"Analysing again as a new attempt ({done.attempt_id[:8]}) under the current "
            "calibration; this result stays as it was."
        )
        self.refresh()  # the new attempt is listed now, not only when its events arrive

    def _reprocess_failed(self, error: Exception) -> None:
        self.detail.reprocess_button.setEnabled(True)
        self.detail.reprocess_message.setText(f"Not reprocessed: {say_error(error)}")

    # -- the list and the detail -------------------------------------------------------------------

    def read_list(self) -> list[AttemptSummary]:
        return self._results.attempts()

    def read_detail(self, key: str) -> Read:
        return key, self._results.attempt_result(key)

    def detail_key(self, detail: Read) -> str:
        return detail[0]

    def show_detail(self, detail: Read) -> None:
        shown, revised, sign_off = detail[1]
        if shown is None:
            self.detail.show_message("This attempt is not in the store any more.")
            return
        self.detail.show_result(shown, revised, sign_off)
        published = shown.document is not None and shown.document.get("status") == "published"
        before = self._exportable
        self._exportable = shown.summary.result_id if published else None
        if self._exportable != before or self._exportable is None:
            self._read_media(self._exportable, keep_frame=False)
        self.export_button.setEnabled(
            self._exportable is not None and not self.export_progress.running
        )

    def show_placeholder(self, text: str) -> None:
        self.detail.show_message(text)
        self._exportable = None
        self.player.set_media(None)

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
            # its revised values changed, and its tracks may have (the frame shown is kept); the
            # list did not
            self.request_detail(shown.summary.attempt_id)
            self._read_media(shown.summary.result_id, keep_frame=True)
