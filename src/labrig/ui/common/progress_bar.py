"""A table column painted as progress bars: the Queue screen's jobs and the Capture
screen's attempts.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QStyleOptionViewItem,
)

BAR_WIDTH = 120  # px: wide enough that a progress bar reads as one


class ProgressBarDelegate(QStyledItemDelegate):
    """Paints the progress column as a bar (the fraction is the model's UserRole data)."""

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        fraction = index.data(Qt.ItemDataRole.UserRole)
        if not isinstance(fraction, float):
            super().paint(painter, option, index)
            return
        bar = QStyleOptionProgressBar()
        bar.rect = option.rect.adjusted(2, 2, -2, -2)
        bar.minimum, bar.maximum = 0, 1000
        bar.progress = round(fraction * 1000)
        bar.text = self.label(fraction, index)
        bar.textVisible = True
        QApplication.style().drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter)

    def label(self, fraction: float, _index: QModelIndex | QPersistentModelIndex) -> str:
        """The text on the bar: the percentage."""
        return f"{fraction:.0%}"

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        hint = super().sizeHint(option, index)
        return QSize(max(hint.width(), BAR_WIDTH), hint.height())
