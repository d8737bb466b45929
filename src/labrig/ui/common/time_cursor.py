"""A time cursor on a plot against time, linked to a player both ways: :meth:`TimeCursor.set_time`
puts the line at the frame shown, and a click in the plot emits :attr:`TimeCursor.clicked` with the
time under the mouse (in the plot's own time units), for the player to seek.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal

LINE = (51, 51, 51)


class TimeCursor(QObject):
    """See the module docstring. The line is kept out of the plot's auto range."""

    clicked = Signal(float)

    def __init__(self, plot: pg.PlotWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.plot, self.item = plot, plot.getPlotItem()
        self.line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(LINE, width=1))
        self.line.setObjectName("timeCursor")
        plot.scene().sigMouseClicked.connect(self._on_clicked)
        plot.setToolTip("Click to show the video at that time")
        self.attach()

    def attach(self) -> None:
        """Draw the line again (after the plot's items were cleared)."""
        if self.line.scene() is None:
            self.item.addItem(self.line, ignoreBounds=True)

    def set_time(self, t: float) -> None:
        self.line.setValue(t)

    @property
    def time(self) -> float:
        return float(self.line.value())

    def _on_clicked(self, event: Any) -> None:
        position = event.scenePos()
        if self.item.vb.sceneBoundingRect().contains(position):
            self.clicked.emit(float(self.item.vb.mapSceneToView(position).x()))
