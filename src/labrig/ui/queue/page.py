"""The Queue page: every job with its state and live progress, and the operator's actions on one.

Threading contract: GUI thread only. The page never polls; it redraws when its
:class:`~labrig.ui.shell.queue_monitor.QueueMonitor` re-reads the queue and when the
executor reports progress.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QItemSelection, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from labrig.domain.jobs import TERMINAL, JobState
from labrig.errors import LabrigError
from labrig.jobs import JobQueue, JobView
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
        self._lay_out()
        monitor.snapshotChanged.connect(self._on_monitor_snapshot_changed)
        monitor.jobProgressed.connect(self._on_monitor_job_progressed)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self._on_monitor_snapshot_changed()

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
        layout.addWidget(self.table, 1)
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

    @Slot()
    def _on_monitor_snapshot_changed(self) -> None:
        keep = self.selected_job()
        self.model.set_jobs(self._monitor.jobs, self._monitor.attempt_names)
        self.empty_note.setVisible(not self._monitor.jobs)
        if keep is not None:
            self.select_job(keep.id)
        self._update_buttons()

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
