"""The Results list: one row per attempt, newest first, with its result status in words and colour.

Threading contract: GUI thread only; rows come from
:func:`~labrig.analysis.result_views.list_attempts`, read on a pool thread by the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from labrig.analysis.result_views import AttemptSummary, ResultStatus

COLUMNS = ("Subject", "Attempt", "Result", "Protocol", "Recorded")
STATUS_COLUMN = COLUMNS.index("Result")
STATUS_WORDS = {
    ResultStatus.PUBLISHED: "Published",
    ResultStatus.DEGRADED: "Published, degraded",
    ResultStatus.BLOCKED: "Blocked",
    ResultStatus.PENDING: "Pending",
}
# Light fills that keep black text readable in both the default and a dark palette's table.
STATUS_COLOURS = {
    ResultStatus.PUBLISHED: QColor("#c8ecc8"),
    ResultStatus.DEGRADED: QColor("#ffe2a8"),
    ResultStatus.BLOCKED: QColor("#f6c0c0"),
    ResultStatus.PENDING: QColor("#e2e2e2"),
}
Index = QModelIndex | QPersistentModelIndex


class AttemptResultsModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[AttemptSummary] = []

    def set_attempts(self, attempts: Sequence[AttemptSummary]) -> None:
        self.beginResetModel()
        self.rows = list(attempts)
        self.endResetModel()

    def row_of(self, attempt_id: str) -> int | None:
        return next((i for i, r in enumerate(self.rows) if r.attempt_id == attempt_id), None)

    def summary(self, attempt_id: str) -> AttemptSummary | None:
        row = self.row_of(attempt_id)
        return None if row is None else self.rows[row]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, column = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (row.subject_code, str(row.number), STATUS_WORDS[row.status], row.protocol,
                    f"{row.created_at.astimezone():%Y-%m-%d %H:%M}")[column]
        if role == Qt.ItemDataRole.BackgroundRole and column == STATUS_COLUMN:
            return STATUS_COLOURS[row.status]
        if role == Qt.ItemDataRole.ForegroundRole and column == STATUS_COLUMN:
            return QColor("black")
        if role == Qt.ItemDataRole.ToolTipRole:
            return "\n".join((f"attempt {row.attempt_id}", *row.reasons))
        return None
