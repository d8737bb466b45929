"""The Queue screen's table: jobs newest first, running ones with the executor's live progress.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt

from labrig.domain.jobs import JobState
from labrig.jobs import JobView
from labrig.tasks import Progress
from labrig.ui.common.rows_model import ColumnsTableModel
from labrig.ui.shell.queue_monitor import RUNNING_STATES

# "Tries": how often the queue ran the job (retries included), not the subject's recording attempts
COLUMNS = ("Job", "Attempt", "Stage", "State", "Progress", "Tries", "Error")
S = JobState
# a job's state in a technician's words; the internal name stays in the tooltip
STATE_WORDS = {
    S.CREATED: "Created",
    S.INPUTS_PENDING: "Waiting for the previous stage",
    S.READY: "Ready",
    S.LEASED: "Starting",
    S.RUNNING: "Running",
    S.CHECKPOINTED: "Running (checkpoint saved)",
    S.SUCCEEDED: "Done",
    S.SUCCEEDED_DEGRADED: "Done, degraded",
    S.RETRY_WAITING: "Will retry",
    S.BLOCKED_BY_QUALITY: "Blocked by a quality check",
    S.PERMANENT_FAILURE: "Failed",
    S.CANCELLED: "Cancelled",
    S.SUPERSEDED: "Replaced by a reprocess",
}
JOB_COLUMN, STATE_COLUMN, PROGRESS_COLUMN, ERROR_COLUMN = (
    COLUMNS.index(c) for c in ("Job", "State", "Progress", "Error")
)
ID_PREFIX = 8
Index = QModelIndex | QPersistentModelIndex


class JobTableModel(ColumnsTableModel):
    """Jobs newest first, one row each; running jobs show the executor's live progress."""

    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: list[JobView] = []
        self._names: Mapping[str, str] = {}
        self._rows: dict[str, int] = {}
        self._live: dict[
            str, Progress
        ] = {}  # newer than the stored progress, which is saved only at renewals

    def set_jobs(self, jobs: Sequence[JobView], names: Mapping[str, str] | None = None) -> None:
        """``jobs`` newest first, as :meth:`JobQueue.jobs` gives them with ``newest_first``;
        ``names``: attempt id → "DEMO-001 · attempt 2"."""
        self.beginResetModel()
        self._jobs = list(jobs)
        self._names = names or {}
        self._rows = {job.id: row for row, job in enumerate(self._jobs)}
        self._live = {
            i: p
            for i, p in self._live.items()
            if i in self._rows and self._jobs[self._rows[i]].state in RUNNING_STATES
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

    def row_count(self) -> int:
        return len(self._jobs)

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
        state = STATE_WORDS.get(job.state, job.state.value) + (
            " (cancel requested)" if job.cancel_requested and job.state in RUNNING_STATES else ""
        )
        return (
            job.id[:ID_PREFIX],
            self._names.get(job.attempt_id or "", "—" if job.attempt_id is None else ""),
            job.stage_id,
            state,
            "",
            f"{job.attempts} of {job.max_attempts}",
            job.error_code or "",
        )[column]

    def _tooltip(self, job: JobView, column: int) -> str:
        if column == PROGRESS_COLUMN:
            return self.progress_of(job).message
        if column == ERROR_COLUMN and job.error_code:
            return f"{job.error_code}: {job.error_message or ''}"
        if column == STATE_COLUMN:
            return job.state.value
        if column == JOB_COLUMN:
            return job.id + (
                f"\nsupersedes {job.supersedes_job_id}" if job.supersedes_job_id else ""
            )
        return ""
