"""The Results page: the attempts with their result status, a page of 200 at a time through the
whole catalog, found by a search (subject, protocol, operator, attempt id), filtered by result
status, review and device or rig, sorted by a click on a column's header; the selected one's
plots, metrics and provenance.

Threading contract: GUI thread only. The page never polls. It reads the store on a pool thread when
it is first shown and again whenever the :class:`~labrig.ui.shell.bridge.EventBridge` reports an
event that may change a status (an attempt created, a stage requested or finally failed, a quality
block, a result published); a hidden page only notes that it is stale and reads when next shown.
Newer reads overtake older ones (:class:`~labrig.ui.shell.latest.Latest`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex, Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from labrig.domain.events import EventName
from labrig.events import EventRecord
from labrig.results import AttemptSummary, refreshes_results
from labrig.results.search import ATTEMPT_PAGE, AttemptQuery, Source
from labrig.review import Reprocessed, ReviewedResults, Shown
from labrig.ui.common.browse_bar import BrowseBar, PageOfRows, period_start
from labrig.ui.common.list_detail import ListDetailPage
from labrig.ui.common.player import PlayerWidget
from labrig.ui.common.result_view import ResultView
from labrig.ui.results.filters import COLUMN_SORTS, ListOrder, ResultsFilters
from labrig.ui.results.model import EXPORTABLE, AttemptResultsModel
from labrig.ui.results.sessions import SessionsDialog
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.bridge import EventBridge

if TYPE_CHECKING:
    from labrig.export import ExportService
    from labrig.ui.results.export_dialog import ExportDialog

LIST_WIDTH = 430  # px: subject, attempt, result and protocol fit without scrolling
Read = tuple[str, Shown]  # the attempt asked for, and what was read of it
EXPORT_TIP = (
    "Export the selected results, or every published one, into a folder: choose the formats "
    "(CSV, C3D, TRC, NWB, overlay video) and whether to include the recordings"
)
NOTHING_TO_EXPORT_TIP = "Nothing to export yet: only published results can be exported"


class AttemptsPage(PageOfRows[AttemptSummary]):
    """A page of attempts, with the rigs and devices the catalog knows (read with it)."""

    sources: tuple[Source, ...] = ()


class ResultsPage(ListDetailPage[AttemptSummary, Read]):
    """The attempt list on the left (ctrl- or shift-click selects several, to export them), the
    current attempt's :class:`ResultView` on the right."""

    nothing_selected_text = "Select an attempt to see its result."
    reading_text = "Reading the result…"
    unlisted_text = "The selected attempt is no longer listed."
    list_noun, detail_noun = "results", "result"

    def __init__(
        self,
        results: ReviewedResults,
        export: Callable[[], ExportService],
        bridge: EventBridge,
        parent: QWidget | None = None,
    ) -> None:
        """``export``: gives the export service when the Export dialog is first opened (the
        service and its formats are imported then, not when the window opens)."""
        super().__init__(bridge, AttemptResultsModel(), "attemptTable", parent=parent)
        self._results = results
        self.detail = ResultView()
        self._export, self._exporting = export, BackgroundCalls(threads=1, parent=self)
        self._shown_published: str | None = None  # the shown result, when it is published
        self._focus: str | None = None  # the attempt whose detail is shown or being read
        self._kept: list[str] = []  # the attempts selected when the list was last replaced
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.selectionModel().currentChanged.connect(self._on_table_current_changed)
        self.model.modelAboutToBeReset.connect(self._on_model_about_to_be_reset)
        self.model.modelReset.connect(self._update_export_button)
        self.export_dialog: ExportDialog | None = None  # made when first opened
        self.export_button = QPushButton("Export…")
        self.export_button.setObjectName("exportButton")
        self.export_button.clicked.connect(self.open_export_dialog)
        self._update_export_button()
        self.detail.reprocess_button.clicked.connect(self.reprocess_shown)
        # the attempt's recording, frame by frame, with its tracks drawn (as on the Review page)
        self.player = PlayerWidget()
        self.detail.tabs.insertTab(1, self.player, "Recording")
        self.player.frame_shown.connect(self._on_frame_shown)
        self.detail.plotClicked.connect(self._on_plot_clicked)
        # the whole catalog a page at a time: a search and the newer and older pages
        self.browse = BrowseBar(
            ATTEMPT_PAGE, "Subject, protocol, operator or id", what="attempts", narrow=True
        )
        self.browse.changed.connect(self.refresh)
        self.filters = ResultsFilters()
        self.filters.changed.connect(self._on_filters_changed)
        self.filters.sessionsRequested.connect(self.open_sessions)
        self.sessions_dialog: SessionsDialog | None = None  # made when first opened
        self.order = ListOrder(self.table.horizontalHeader(), COLUMN_SORTS)
        self.order.changed.connect(self._on_filters_changed)
        self._lay_out()

    @Slot()
    def _on_filters_changed(self) -> None:
        """A filter or the order changed: the first page again."""
        self.browse.restart()
        self.refresh()

    def _lay_out(self) -> None:
        right = QWidget()
        detail_column = QVBoxLayout(right)
        detail_column.setContentsMargins(0, 0, 0, 0)
        detail_column.addWidget(self.detail, 1)
        export_row = QHBoxLayout()
        export_row.addWidget(self.export_button)
        export_row.addStretch(1)
        detail_column.addLayout(export_row)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("resultsSplitter")  # positions kept between runs by name
        above = QWidget()
        rows = QVBoxLayout(above)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.addWidget(self.browse)
        rows.addWidget(self.filters)
        split.addWidget(self.list_column_under(above))
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
        if self.sessions_dialog is not None:
            self.sessions_dialog.shut_down(timeout_ms)

    # -- the recording ---------------------------------------------------------------------------

    def _read_media(self, result_id: str | None, keep_frame: bool) -> None:
        """The shown result's recording and tracks for the player (nothing for no result)."""
        if result_id is None:
            self.player.set_media(None)
            return
        self.player.load(
            partial(self._results.media, result_id),
            keep_frame=keep_frame,
            wanted=lambda media: self._shown_published == media.result_id,
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

    def selected_rows(self) -> list[AttemptSummary]:
        """The attempts selected in the list, in its order."""
        rows = sorted(i.row() for i in self.table.selectionModel().selectedRows())
        return [self.model.rows[r] for r in rows if r < len(self.model.rows)]

    def open_export_dialog(self) -> ExportDialog:
        """The Export dialog, offering the selected results (while an export runs: showing it)."""
        if self.export_dialog is None:
            from labrig.ui.results.export_dialog import ExportDialog

            self.export_dialog = ExportDialog(self._export(), self._exporting, parent=self)
        self.export_dialog.offer(self.selected_rows())
        self.export_dialog.open()  # window-modal, no nested event loop
        return self.export_dialog

    @Slot()
    def _update_export_button(self) -> None:
        """Offered while the list holds a published result (the reviewer role is the service's
        check, said in the dialog)."""
        exportable = any(row.status in EXPORTABLE for row in self.model.rows)
        self.export_button.setEnabled(exportable)
        self.export_button.setToolTip(EXPORT_TIP if exportable else NOTHING_TO_EXPORT_TIP)

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

    def read_list(self) -> PageOfRows[AttemptSummary]:
        days = self.browse.days  # plain data, as the rest of the query
        query = AttemptQuery(
            self.browse.words,
            ATTEMPT_PAGE + 1,  # one more: whether an older page has rows
            self.browse.offset,
            period_start(days),
            sort=self.order.sort,
            descending=self.order.descending,
            status=self.filters.status,
            review=self.filters.review,
            source=self.filters.source,
            session=self.filters.session.id if self.filters.session is not None else None,
            after=self.browse.after,
        )
        read = self._results.attempts(query)
        rows = read[:ATTEMPT_PAGE]
        page = AttemptsPage(
            rows, self._results.count_attempts(query), query.offset, query.search, days
        )
        page.sources = tuple(self._results.sources())
        page.next_after = rows[-1].position if rows else None
        page.older = len(read) > len(rows)
        return page

    def open_sessions(self) -> SessionsDialog:
        """The sessions, to choose the one whose attempts to list (window-modal)."""
        if self.sessions_dialog is None:
            self.sessions_dialog = SessionsDialog(self._results.sessions, parent=self)
            self.sessions_dialog.chosen.connect(self.filters.set_session)
        self.sessions_dialog.open()
        return self.sessions_dialog

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
        before = self._shown_published
        self._shown_published = shown.summary.result_id if published else None
        if self._shown_published != before or self._shown_published is None:
            self._read_media(self._shown_published, keep_frame=False)

    def show_placeholder(self, text: str) -> None:
        self.detail.show_message(text)
        self._shown_published = None
        self.player.set_media(None)

    def on_selection_changed(self, key: str | None) -> None:
        self._focus = key

    def selected_key(self) -> str | None:
        """The attempt shown in detail: the current (last clicked) row when it is selected, else
        the first selected."""
        selection = self.table.selectionModel()
        current = selection.currentIndex()
        if (
            current.isValid()
            and current.row() < len(self.model.rows)
            and selection.isRowSelected(current.row(), QModelIndex())
        ):
            return self.model.key(self.model.rows[current.row()])
        return super().selected_key()

    def select(self, key: str) -> bool:
        """Select ``key``'s row as the current one; after the list was read again, the other rows
        selected before it stay selected."""
        kept, self._kept = self._kept, []
        row = self.model.row_of(key)
        if row is None:
            self.table.clearSelection()
            return False
        rows = {row, *(r for k in kept if (r := self.model.row_of(k)) is not None)}
        last = self.model.columnCount() - 1
        chosen = QItemSelection()
        for r in rows:
            chosen.select(self.model.index(r, 0), self.model.index(r, last))
        selection = self.table.selectionModel()
        flags = QItemSelectionModel.SelectionFlag
        selection.select(chosen, flags.ClearAndSelect | flags.Rows)
        selection.setCurrentIndex(self.model.index(row, 0), flags.NoUpdate)
        return True

    @Slot()
    def _on_model_about_to_be_reset(self) -> None:
        self._kept = [self.model.key(row) for row in self.selected_rows()]

    @Slot(QItemSelection, QItemSelection)
    def _on_table_selection_changed(
        self, selected: QItemSelection, deselected: QItemSelection
    ) -> None:
        """Adding a row to the selection, or taking one that is not shown from it, leaves the
        detail as it is."""
        key = self.selected_key()
        if key is None or key != self._focus:
            super()._on_table_selection_changed(selected, deselected)

    @Slot(QModelIndex, QModelIndex)
    def _on_table_current_changed(self, _current: QModelIndex, _previous: QModelIndex) -> None:
        """Keyboard selection moves the current row after the selection: show the new one."""
        if self.selected_key() != self._focus:
            super()._on_table_selection_changed(QItemSelection(), QItemSelection())

    def describe_list(self, rows: list[AttemptSummary]) -> str:
        assert isinstance(rows, AttemptsPage)  # what read_list returns
        self.filters.set_sources(list(rows.sources))
        if not rows.total and self.filters.active:
            self.browse.show_page(rows)
            return "No attempts match these filters: choose Any in a list to widen them."
        none_yet = "No attempts yet: record one on the Capture page."
        return self.browse.status(rows, "attempt", "attempts", none_yet, order=self.order.words)

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
