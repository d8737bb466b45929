"""The Review list: one row per published result, newest first, with how many times reviewers revised it.

Threading contract: GUI thread only; rows come from :func:`~labrig.ui.review_data.read_review_list`, read on a
pool thread by the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from labrig.ui.review_data import ReviewListRow, local_time

COLUMNS = ("Subject", "Attempt", "Published", "Revisions", "Note")
REVISIONS_COLUMN = COLUMNS.index("Revisions")
REVISED = QColor("#ffe2a8")  # the colour of revised values on the Review and Results pages
Index = QModelIndex | QPersistentModelIndex


def note(row: ReviewListRow) -> str:
    words = []
    if row.degraded:
        words.append("degraded")
    if row.superseded:
        words.append("superseded by a reprocess")
    return ", ".join(words)


class ReviewListModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ReviewListRow] = []

    def set_rows(self, rows: Sequence[ReviewListRow]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def row_of(self, result_id: str) -> int | None:
        return next((i for i, r in enumerate(self.rows) if r.result_id == result_id), None)

    def find(self, result_id: str) -> ReviewListRow | None:
        row = self.row_of(result_id)
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
            return (row.subject_code or row.attempt_id[:8],
                    "—" if row.attempt_number is None else str(row.attempt_number),
                    local_time(row.created_at), str(row.revisions), note(row))[column]
        if role == Qt.ItemDataRole.BackgroundRole and column == REVISIONS_COLUMN and row.revisions:
            return REVISED
        if role == Qt.ItemDataRole.ForegroundRole and column == REVISIONS_COLUMN and row.revisions:
            return QColor("black")
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"result {row.result_id}\nattempt {row.attempt_id}"
        return None


def list_view(model: ReviewListModel) -> QTableView:
    """The list as a read-only table, one row selected at a time."""
    table = QTableView()
    table.setObjectName("reviewResults")
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    return table
