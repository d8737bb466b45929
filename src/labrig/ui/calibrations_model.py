"""The Calibration list: one row per stored calibration, newest first, with its binding, age and validity.

Threading contract: GUI thread only; rows come from
:func:`~labrig.analysis.calibration_views.list_calibrations`, read on a pool thread by the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from labrig.analysis.calibration_views import CalibrationSummary, Validity

COLUMNS = ("Device", "Mode", "Age", "RMS (px)", "Verdict", "Scale")
VERDICT_COLUMN = COLUMNS.index("Verdict")
VERDICT_WORDS = {
    Validity.IN_USE: "Valid, in use",
    Validity.SUPERSEDED: "Valid, superseded",
    Validity.EXPIRED: "Expired",
    Validity.NOT_VALID: "Not valid",
}
VERDICT_COLOURS = {
    Validity.IN_USE: QColor("#c8ecc8"),
    Validity.SUPERSEDED: QColor("#e2e2e2"),
    Validity.EXPIRED: QColor("#ffe2a8"),
    Validity.NOT_VALID: QColor("#f6c0c0"),
}
Index = QModelIndex | QPersistentModelIndex


class CalibrationTableModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[CalibrationSummary] = []

    def set_calibrations(self, calibrations: Sequence[CalibrationSummary]) -> None:
        self.beginResetModel()
        self.rows = list(calibrations)
        self.endResetModel()

    def row_of(self, calibration_id: str) -> int | None:
        return next((i for i, r in enumerate(self.rows) if r.calibration_id == calibration_id), None)

    def summary(self, calibration_id: str) -> CalibrationSummary | None:
        row = self.row_of(calibration_id)
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
            return (row.device_id, row.mode, row.age(), f"{row.rms_px:.3f}", VERDICT_WORDS[row.validity],
                    "mm on the plane" if row.has_plane else "pixels only")[column]
        if role == Qt.ItemDataRole.BackgroundRole and column == VERDICT_COLUMN:
            return VERDICT_COLOURS[row.validity]
        if role == Qt.ItemDataRole.ForegroundRole and column == VERDICT_COLUMN:
            return QColor("black")
        if role == Qt.ItemDataRole.ToolTipRole:
            until = f"valid until {row.valid_until.astimezone():%Y-%m-%d %H:%M}" if row.valid_until else "never bound"
            return f"calibration {row.calibration_id}\ncalibrated {row.created_at.astimezone():%Y-%m-%d %H:%M}\n{until}"
        return None
