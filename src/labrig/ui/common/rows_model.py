"""A read-only table over a list of frozen rows: what the Calibration, Results and
Review lists share.

Threading contract: GUI thread only. A subclass says what its columns are, which
key identifies a row, the text of each cell, and which one column carries a
coloured status (dark text on a light fill, readable in any palette).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

Row = TypeVar("Row")
Index = QModelIndex | QPersistentModelIndex
STATUS_TEXT = QColor("black")


class ColumnsTableModel(QAbstractTableModel):
    """A flat table whose column titles are fixed: what every Labrig table model shares.
    A subclass says its :attr:`columns` and how many rows it holds (:meth:`row_count`),
    and answers ``data``."""

    columns: ClassVar[tuple[str, ...]] = ()

    def row_count(self) -> int:
        raise NotImplementedError

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else self.row_count()

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section]
        return None


class RowsTableModel(ColumnsTableModel, Generic[Row]):
    """Rows replaced as a whole by :meth:`set_rows`; found by their key with :meth:`row_of`
    and :meth:`find`."""

    #: the column whose cell is filled with :meth:`status_colour` (None: no coloured column)
    status_column: ClassVar[int | None] = None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Row] = []

    # -- what a subclass says --------------------------------------------------------------------

    def key(self, row: Row) -> str:
        raise NotImplementedError

    def cells(self, row: Row) -> tuple[str, ...]:
        raise NotImplementedError

    def status_colour(self, row: Row) -> QColor | None:
        return None

    def tooltip(self, row: Row) -> str | None:
        return None

    # -- shared ----------------------------------------------------------------------------------

    def set_rows(self, rows: Sequence[Row]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def row_of(self, key: str) -> int | None:
        return next((i for i, r in enumerate(self.rows) if self.key(r) == key), None)

    def find(self, key: str) -> Row | None:
        row = self.row_of(key)
        return None if row is None else self.rows[row]

    def row_count(self) -> int:
        return len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, column = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cells(row)[column]
        if column == self.status_column and role in (
            Qt.ItemDataRole.BackgroundRole,
            Qt.ItemDataRole.ForegroundRole,
        ):
            colour = self.status_colour(row)
            if colour is None:
                return None
            return colour if role == Qt.ItemDataRole.BackgroundRole else STATUS_TEXT
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.tooltip(row)
        return None


def rows_table(model: RowsTableModel[Any], name: str) -> QTableView:
    """``model`` as a read-only table named ``name``: whole rows, one selected at a time."""
    table = QTableView()
    table.setObjectName(name)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def selected_key(table: QTableView, model: RowsTableModel[Any]) -> str | None:
    """The key of the row selected in ``table`` (which shows ``model``), or None."""
    rows = table.selectionModel().selectedRows()
    return model.key(model.rows[rows[0].row()]) if rows else None


def select_key(table: QTableView, model: RowsTableModel[Any], key: str) -> bool:
    """Select the row of ``key`` in ``table``; False, and nothing selected, when ``model``
    does not hold it."""
    row = model.row_of(key)
    if row is None:
        table.clearSelection()
        return False
    table.selectRow(row)
    return True
