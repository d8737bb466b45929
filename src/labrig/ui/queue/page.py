"""The Queue page: every job with its state and live progress, a page at a time, and the operator's
actions on one.

The jobs are shown newest first, 200 to a page, with the newer and older pages, a search (the start
of a job's or an attempt's id) and a choice of which jobs: every one, those waiting or running, or
those that need an operator. Each page is one read of an index (:mod:`labrig.jobs.listing`); a
change of the queue while the page is hidden is read when it is shown again.

Threading contract: GUI thread only. The page never polls; it reads its page again when its
:class:`~labrig.ui.shell.queue_monitor.QueueMonitor` says the queue changed, and redraws progress
when the executor reports it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QItemSelection, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from labrig.domain.jobs import TERMINAL, UNSETTLED, JobState
from labrig.errors import LabrigError
from labrig.jobs import JobQueue, JobView
from labrig.jobs.listing import JobQuery, count_jobs, read_jobs
from labrig.ui.common.browse_bar import BrowseBar, PageOfRows, period_words
from labrig.ui.common.progress_bar import ProgressBarDelegate
from labrig.ui.common.widgets import named_button
from labrig.ui.queue.model import ID_PREFIX, PROGRESS_COLUMN, JobTableModel
from labrig.ui.shell.queue_monitor import RUNNING_STATES, QueueMonitor

S = JobState
RETRYABLE = frozenset({S.PERMANENT_FAILURE, S.CANCELLED})
RETRY_TIP = (
    "Run a failed or cancelled job again. Retry is a reprocess: a new job over the same inputs and "
    "config, linked to this one; the failed job stays as it ended, for the record."
)
CANCEL_TIP = (
    "Cancel the job. A job no worker holds ends Cancelled at once; a running one stops at its "
    "next check and then ends Cancelled."
)
REPROCESS_TIP = (
    "Create a new job over the same inputs and config, linked to this one. A Ready or "
    "quality-blocked job is superseded by it; a running job must be cancelled first."
)


#: jobs on one page of the table
JOB_PAGE = 200
NEEDS_OPERATOR = (S.BLOCKED_BY_QUALITY, S.PERMANENT_FAILURE)
#: what the "Show" list offers, and the states each shows (none: every job); the live queue's groups
#: and their counts read the index of unsettled jobs, however long the history
SHOWN: tuple[tuple[str, tuple[JobState, ...]], ...] = (
    ("Every job", ()),
    ("Waiting or running", tuple(s for s in UNSETTLED if s not in NEEDS_OPERATOR)),
    ("Needs an operator (failed or blocked)", NEEDS_OPERATOR),
)
SEARCH_TIP = (
    "Type the start of a job's id or of its attempt's id: every page of the queue is searched"
)

EMPTY_TEXT = (
    "No jobs yet. Jobs appear here when an attempt is recorded: its analysis (media check, "
    "marker tracking, kinematics) is queued as one job per stage."
)


class QueuePage(QWidget):
    """The job table plus Retry, Cancel and Reprocess for the selected job, through ``queue``."""

    def __init__(
        self, queue: JobQueue, monitor: QueueMonitor, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._queue, self._monitor = queue, monitor
        self.model = JobTableModel(self)
        self.table = self._build_table()
        self.retry_button = named_button(
            "retryButton", "Retry", self._on_retry_button_clicked, RETRY_TIP
        )
        self.cancel_button = named_button(
            "cancelButton", "Cancel", self._on_cancel_button_clicked, CANCEL_TIP
        )
        self.reprocess_button = named_button(
            "reprocessButton", "Reprocess", self._on_reprocess_button_clicked, REPROCESS_TIP
        )
        self.empty_note = QLabel(EMPTY_TEXT)
        self.empty_note.setObjectName("emptyNote")
        self.empty_note.setWordWrap(True)
        self.action_status = QLabel("")
        self.action_status.setObjectName("actionStatus")
        self.action_status.setWordWrap(True)
        self.browse = BrowseBar(JOB_PAGE, "Job or attempt id", tip=SEARCH_TIP, what="jobs")
        self.shown = QComboBox()
        self.shown.setObjectName("jobsShown")
        self.shown.setToolTip("Which jobs the table lists, newest first")
        for words, _states in SHOWN:
            self.shown.addItem(words)
        self.list_status = QLabel("")
        self.list_status.setObjectName("listStatus")
        self.page: PageOfRows[JobView] = PageOfRows([], 0, 0, None)
        self._lay_out()
        monitor.snapshotChanged.connect(self._on_monitor_snapshot_changed)
        monitor.jobProgressed.connect(self._on_monitor_job_progressed)
        self.browse.changed.connect(self.read_page)
        self.shown.currentIndexChanged.connect(self._on_shown_current_index_changed)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self._stale = False  # the queue changed while the page was hidden: read it when shown
        self.read_page()  # built when first shown or asked for (MainWindow.page)

    def _build_table(self) -> QTableView:
        table = QTableView()
        table.setObjectName("jobTable")
        table.setModel(self.model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setItemDelegateForColumn(PROGRESS_COLUMN, ProgressBarDelegate(table))
        table.verticalHeader().hide()
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        table.horizontalHeader().setStretchLastSection(True)
        return table

    def _lay_out(self) -> None:
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Queue</h2>"))
        layout.addWidget(self.empty_note)
        browsing = QHBoxLayout()
        browsing.addWidget(QLabel("Show:"))
        browsing.addWidget(self.shown)
        browsing.addWidget(self.browse, 1)
        layout.addLayout(browsing)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.list_status)
        buttons = QHBoxLayout()
        for button in (self.retry_button, self.cancel_button, self.reprocess_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addWidget(self.action_status)

    def selected_job(self) -> JobView | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.job_at(rows[0].row()) if rows else None

    def select_job(self, job_id: str) -> bool:
        """Select the row of ``job_id``; False when the table does not show it."""
        row = self.model.row_of(job_id)
        if row is None:
            self.table.clearSelection()
            return False
        self.table.selectRow(row)
        return True

    def query(self) -> JobQuery:
        """The page asked for: the jobs shown, the search, the offset."""
        return JobQuery(
            SHOWN[max(self.shown.currentIndex(), 0)][1],
            search=self.browse.words,
            newest_first=True,
            limit=JOB_PAGE,
            offset=self.browse.offset,
            since=self.browse.since(),
        )

    @Slot()
    def read_page(self) -> None:
        """Read the page asked for and show it, keeping the selected job selected."""
        query, self._stale = self.query(), False
        with self._queue.store.read() as session:
            jobs, tally = read_jobs(session, query), count_jobs(session, query)
        self.page = PageOfRows(jobs, tally, query.offset, query.search, self.browse.days)
        total = tally.n
        keep = self.selected_job()
        self.model.set_jobs(self.page, self._monitor.names_of(self.page))
        self.empty_note.setVisible(not total and self._unfiltered(query))
        if query.states and not total and query.search is None:
            self.browse.show_page(self.page)
            when = period_words(self.page.days)
            self.list_status.setText(
                f"No jobs: {self.shown.currentText().lower()}{f', {when}' if when else ''}."
            )
        else:
            self.list_status.setText(self.browse.status(self.page, "job", "jobs", ""))
        if keep is not None:
            self.select_job(keep.id)
        self._update_buttons()

    @staticmethod
    def _unfiltered(query: JobQuery) -> bool:
        return query.search is None and not query.states and query.since is None

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.read_page()

    @Slot()
    def _on_monitor_snapshot_changed(self) -> None:
        if self.isVisible():
            self.read_page()
        else:
            self._stale = True

    @Slot(int)
    def _on_shown_current_index_changed(self, _index: int) -> None:
        self.browse.restart()
        self.read_page()

    @Slot(str, float, str)
    def _on_monitor_job_progressed(self, job_id: str, fraction: float, message: str) -> None:
        self.model.set_progress(job_id, fraction, message)

    @Slot(QItemSelection, QItemSelection)
    def _on_table_selection_changed(
        self, _selected: QItemSelection, _deselected: QItemSelection
    ) -> None:
        self._update_buttons()

    def _update_buttons(self) -> None:
        job = self.selected_job()
        state = job.state if job is not None else None
        self.retry_button.setEnabled(state in RETRYABLE)
        self.cancel_button.setEnabled(
            job is not None and state not in TERMINAL and not job.cancel_requested
        )
        self.reprocess_button.setEnabled(job is not None and state not in RUNNING_STATES)

    @Slot()
    def _on_retry_button_clicked(self) -> None:
        if (view := self._act(self._queue.reprocess)) is not None:
            self.action_status.setText(
                f"Retrying job {_short(view.supersedes_job_id)} as new job {_short(view.id)}."
            )

    @Slot()
    def _on_cancel_button_clicked(self) -> None:
        if (view := self._act(self._queue.cancel)) is not None:
            self.action_status.setText(
                f"Cancel requested for job {_short(view.id)}: it stops at its next check and ends "
                "Cancelled."
                if view.cancel_requested
                else f"Job {_short(view.id)} cancelled."
            )

    @Slot()
    def _on_reprocess_button_clicked(self) -> None:
        if (view := self._act(self._queue.reprocess)) is not None:
            self.action_status.setText(
                f"Reprocessing job {_short(view.supersedes_job_id)} as new job {_short(view.id)}."
            )

    def _act(self, action: Callable[[str], JobView]) -> JobView | None:
        """Apply ``action`` to the selected job and show its effect at once;
        None if it was refused."""
        job = self.selected_job()
        if job is None:
            return None
        try:
            view: JobView | None = action(job.id)
        except LabrigError as exc:  # e.g. the job ended meanwhile: say why, change nothing
            self.action_status.setText(str(exc))
            view = None
        self._monitor.refresh_now()
        self.select_job(view.id if view is not None else job.id)
        return view


def _short(job_id: str | None) -> str:
    return (job_id or "?")[:ID_PREFIX]
