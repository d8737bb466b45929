"""The queue as the GUI shows it: a snapshot refreshed on events, and a table model over it.

Threading contract: GUI thread only. Nothing here polls: the snapshot is read
again when the bridge reports an event, when the executor starts or ends a job,
or when an operator acts; live progress comes from the executor's signals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal, Slot

from labrig.domain.jobs import JobState
from labrig.events import EventRecord
from labrig.jobs import JobQueue, JobView
from labrig.ui.bridge import EventBridge
from labrig.ui.progress import Progress
from labrig.ui.qt_executor import JobSignals

S = JobState
RUNNING_STATES = frozenset({S.LEASED, S.RUNNING, S.CHECKPOINTED})
COLUMNS = ("Job", "Stage", "State", "Progress", "Attempts", "Error")
JOB_COLUMN, PROGRESS_COLUMN, ERROR_COLUMN = (COLUMNS.index(c) for c in ("Job", "Progress", "Error"))
ID_PREFIX = 8
JOBS_SHOWN = 500  # the newest; older jobs stay available through `labrig jobs`
Index = QModelIndex | QPersistentModelIndex


def queue_summary(counts: Mapping[JobState, int]) -> str:
    """The status bar's one line: jobs waiting for a worker, held by one, and failed for good."""
    running = sum(counts.get(s, 0) for s in RUNNING_STATES)
    return f"Queue: {counts.get(S.READY, 0)} ready · {running} running · {counts.get(S.PERMANENT_FAILURE, 0)} failed"


class QueueMonitor(QObject):
    """The newest snapshot of the queue (``jobs``, ``counts``), re-read when something changed it.

    A burst of reasons within one turn of the event loop (a hundred jobs enqueued
    at once) costs one read, not a hundred.
    """

    #: ``jobs`` and ``counts`` were re-read.
    snapshotChanged = Signal()
    #: The executor's :attr:`~labrig.ui.qt_executor.JobSignals.jobProgressed`, forwarded.
    jobProgressed = Signal(str, float, str)

    def __init__(self, queue: JobQueue, bridge: EventBridge, jobs: JobSignals, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue = queue
        self.jobs: list[JobView] = []
        self.counts: dict[JobState, int] = {}
        self._states: dict[str, JobState] = {}
        # zero-delay single shot: coalesces a burst of requests into one read (not a poll)
        self._coalesce = QTimer(self)
        self._coalesce.setSingleShot(True)
        self._coalesce.setInterval(0)
        self._coalesce.timeout.connect(self.refresh_now)
        bridge.eventRecorded.connect(self._on_bridge_event_recorded)
        jobs.jobStarted.connect(self._on_executor_job_started)
        jobs.jobFinished.connect(self._on_executor_job_finished)
        jobs.jobFailed.connect(self._on_executor_job_failed)
        jobs.jobProgressed.connect(self._on_executor_job_progressed)
        self.refresh_now()

    def refresh(self) -> None:
        """Re-read the snapshot on the next turn of the event loop."""
        if not self._coalesce.isActive():
            self._coalesce.start()

    @Slot()
    def refresh_now(self) -> None:
        """Re-read the snapshot at once (after an operator's action, so it shows its effect)."""
        self._coalesce.stop()
        self.jobs = self._queue.jobs(limit=JOBS_SHOWN, newest_first=True)
        self.counts = self._queue.counts()
        self._states = {job.id: job.state for job in self.jobs}
        self.snapshotChanged.emit()

    @Slot(object)
    def _on_bridge_event_recorded(self, _event: EventRecord) -> None:
        self.refresh()

    @Slot(str)
    def _on_executor_job_started(self, _job_id: str) -> None:
        self.refresh()  # Ready → Leased → Running records no event

    @Slot(str, float, str)
    def _on_executor_job_progressed(self, job_id: str, fraction: float, message: str) -> None:
        # The worker moves Leased → Running just after jobStarted, recording no event: the first
        # progress shows the stage runs, so read once more if the snapshot still says otherwise.
        if self._states.get(job_id) not in (S.RUNNING, S.CHECKPOINTED):
            self.refresh()
        self.jobProgressed.emit(job_id, fraction, message)

    @Slot(object)
    def _on_executor_job_finished(self, _view: JobView) -> None:
        self.refresh()

    @Slot(str, str, str)
    def _on_executor_job_failed(self, _job_id: str, _code: str, _message: str) -> None:
        self.refresh()


class JobTableModel(QAbstractTableModel):
    """Jobs newest first, one row each; running jobs show the executor's live progress."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: list[JobView] = []
        self._rows: dict[str, int] = {}
        self._live: dict[str, Progress] = {}  # newer than the stored progress, which is saved only at renewals

    def set_jobs(self, jobs: Sequence[JobView]) -> None:
        """``jobs`` newest first, as :meth:`JobQueue.jobs` gives them with ``newest_first``."""
        self.beginResetModel()
        self._jobs = list(jobs)
        self._rows = {job.id: row for row, job in enumerate(self._jobs)}
        self._live = {
            i: p for i, p in self._live.items() if i in self._rows and self._jobs[self._rows[i]].state in RUNNING_STATES
        }
        self.endResetModel()

    def set_progress(self, job_id: str, fraction: float, message: str) -> None:
        self._live[job_id] = Progress(fraction, message)
        row = self._rows.get(job_id)
        if row is not None:
            cell = self.index(row, PROGRESS_COLUMN)
            self.dataChanged.emit(cell, cell)

    def job_at(self, row: int) -> JobView | None:
        return self._jobs[row] if 0 <= row < len(self._jobs) else None

    def row_of(self, job_id: str) -> int | None:
        return self._rows.get(job_id)

    def progress_of(self, job: JobView) -> Progress:
        return self._live.get(job.id) or Progress(job.progress, job.progress_message)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._jobs)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        job = self.job_at(index.row()) if index.isValid() else None
        if job is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(job, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(job, index.column())
        if role == Qt.ItemDataRole.UserRole and index.column() == PROGRESS_COLUMN:
            return self.progress_of(job).fraction
        return None

    def _display(self, job: JobView, column: int) -> str:
        if column == PROGRESS_COLUMN:
            return f"{self.progress_of(job).fraction:.0%}"
        state = job.state.value + (
            " (cancel requested)" if job.cancel_requested and job.state in RUNNING_STATES else ""
        )
        return (
            job.id[:ID_PREFIX],
            job.stage_id,
            state,
            "",
            f"{job.attempts}/{job.max_attempts}",
            job.error_code or "",
        )[column]

    def _tooltip(self, job: JobView, column: int) -> str:
        if column == PROGRESS_COLUMN:
            return self.progress_of(job).message
        if column == ERROR_COLUMN and job.error_code:
            return f"{job.error_code}: {job.error_message or ''}"
        if column == JOB_COLUMN:
            return job.id + (f"\nsupersedes {job.supersedes_job_id}" if job.supersedes_job_id else "")
        return ""
