"""The attempts of the open session, each with the progress of its analysis.

The analysis is the queue's jobs for the attempt, taken from the
:class:`~labrig.ui.shell.queue_monitor.QueueMonitor`'s snapshot (re-read when the bridge
reports an event) plus the executor's live progress: nothing here reads the
database. Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt

from labrig.domain.jobs import JobState
from labrig.jobs import JobView
from labrig.pipeline import SavedRecording
from labrig.ui.common.rows_model import ColumnsTableModel
from labrig.ui.shell.queue_monitor import RUNNING_STATES, WORDS

S = JobState
COLUMNS = ("Attempt", "Frames", "Dropped", "Capture", "Analysis", "Stages")
ANALYSIS_COLUMN = COLUMNS.index("Analysis")
DONE = frozenset({S.SUCCEEDED, S.SUCCEEDED_DEGRADED})
ENDED = DONE | {S.PERMANENT_FAILURE, S.CANCELLED, S.BLOCKED_BY_QUALITY}
Index = QModelIndex | QPersistentModelIndex


def stage_words(job: JobView, fraction: float) -> str:
    state = (
        f"{fraction:.0%}" if job.state in RUNNING_STATES else WORDS.get(job.state, job.state.value)
    )
    return f"{job.stage_id} {state}"


class AttemptTableModel(ColumnsTableModel):
    """Attempts oldest first; the Analysis column's UserRole is the fraction of its stages done."""

    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[SavedRecording] = []
        self._jobs: dict[str, list[JobView]] = {}  # attempt id → its live jobs, oldest first
        self._live: dict[str, float] = {}  # job id → newest progress reported by the executor

    def add(self, row: SavedRecording) -> None:
        self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows))
        self.rows.append(row)
        self.endInsertRows()

    def clear(self) -> None:
        self.beginResetModel()
        self.rows, self._jobs, self._live = [], {}, {}
        self.endResetModel()

    def set_jobs(self, jobs: Sequence[JobView]) -> None:
        """The queue snapshot (any order); only the jobs of the attempts shown are kept."""
        shown = {r.attempt_id for r in self.rows if r.attempt_id}
        grouped: dict[str, list[JobView]] = {}
        for job in sorted(jobs, key=lambda j: j.created_at):
            if job.attempt_id in shown and job.state is not S.SUPERSEDED:
                grouped.setdefault(job.attempt_id, []).append(job)
        self._jobs = grouped
        self._live = {
            j.id: f
            for j, f in ((j, self._live.get(j.id)) for g in grouped.values() for j in g)
            if f is not None and j.state in RUNNING_STATES
        }
        self._changed(0, len(self.rows) - 1)

    def set_progress(self, job_id: str, fraction: float) -> None:
        for row, attempt in enumerate(self.rows):
            if any(j.id == job_id for j in self._jobs.get(attempt.attempt_id or "", ())):
                self._live[job_id] = fraction
                self._changed(row, row)
                return

    def jobs_of(self, attempt_id: str) -> list[JobView]:
        return list(self._jobs.get(attempt_id, ()))

    def analysis(self, row: SavedRecording) -> tuple[float, str, str]:
        """(fraction of the stages done, a summary, each stage in words)."""
        if row.attempt_id is None:
            return 0.0, "not requested", row.note
        jobs = self._jobs.get(row.attempt_id, [])
        if not jobs:
            return 0.0, "requested", ""
        fractions = [self._fraction(j) for j in jobs]
        done = sum(j.state in DONE for j in jobs)
        stopped = sum(j.state in ENDED for j in jobs) - done
        summary = f"{done} of {len(jobs)} stages done" + (f", {stopped} stopped" if stopped else "")
        stages = " · ".join(stage_words(j, f) for j, f in zip(jobs, fractions, strict=True))
        return sum(fractions) / len(jobs), summary, stages

    def _fraction(self, job: JobView) -> float:
        if job.state in DONE:
            return 1.0
        if job.state in RUNNING_STATES:
            return self._live.get(job.id, job.progress)
        return 0.0

    def _changed(self, first: int, last: int) -> None:
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(COLUMNS) - 1))

    def row_count(self) -> int:
        return len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, column = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.UserRole and column == ANALYSIS_COLUMN:
            return self.analysis(row)[0]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, column)
        return None

    def _display(self, row: SavedRecording, column: int) -> str:
        _, summary, stages = self.analysis(row)
        number = str(row.number) if row.number is not None else "—"
        return (number, str(row.frames), str(row.dropped), row.capture_id[:8], summary, stages)[
            column
        ]

    def _tooltip(self, row: SavedRecording, column: int) -> str:
        if column == COLUMNS.index("Capture"):
            return f"capture {row.capture_id}\nmanifest SHA-256 {row.manifest_sha256}"
        if column == COLUMNS.index("Attempt"):
            return "\n".join(t for t in (row.attempt_id or "no attempt", row.note) if t)
        if column in (ANALYSIS_COLUMN, COLUMNS.index("Stages")):
            return self.analysis(row)[2]  # the stages in full, where the column cuts them
        return ""
