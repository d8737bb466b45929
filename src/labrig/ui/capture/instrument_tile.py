"""An instrument's tile in the rig grid: its last seconds of samples as a scrolling plot.

Each channel is one curve, named with its unit in the legend; the x axis is seconds before now
(−5 to 0), so the newest samples are always at the right edge. The plot is redrawn ten times a
second from :meth:`~labrig.capture.instrument_recorder.InstrumentRecorder.recent_samples`, which
copies what the grab thread kept and never makes it wait.

Threading contract: GUI thread only.
"""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from labrig.capture.instrument_recorder import PLOT_SECONDS, InstrumentRecorder
from labrig.capture.samples import SampleMode

REDRAW_MS = 100
MAX_POINTS = 1000  # per curve: a 1 kHz instrument's 5 s drawn at every fifth sample


class InstrumentTile(QWidget):
    """One instrument of the rig: its plot and a caption under it."""

    def __init__(self, place: str, mode: SampleMode, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.place, self.mode = place, mode
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("instrumentPlot")
        self.plot.setMinimumSize(160, 90)
        item = self.plot.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.3)
        item.setXRange(-PLOT_SECONDS, 0, padding=0)
        item.setMouseEnabled(x=False, y=False)
        item.setLabel("bottom", "s before now")
        item.getAxis("bottom").enableAutoSIPrefix(False)
        item.getAxis("left").enableAutoSIPrefix(False)
        item.setTitle(f"{place}: starts with Record", color="#333")
        legend = item.addLegend(offset=(4, 4), colCount=min(len(mode.channels), 3))
        legend.setLabelTextSize("7pt")
        self.curves = [
            item.plot(
                [],
                [],
                pen=pg.mkPen(pg.intColor(n, hues=max(len(mode.channels), 3)), width=1),
                name=channel.header(),
            )
            for n, channel in enumerate(mode.channels)
        ]
        self.caption = QLabel(place)
        self.caption.setObjectName("rigTileCaption")
        self._recorder: InstrumentRecorder | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.caption)

    def follow(self, recorder: InstrumentRecorder) -> None:
        self._recorder = recorder
        self.plot.getPlotItem().setTitle(f"{self.place}: {self.mode.label()}", color="#333")
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._recorder = None

    def shut_down(self, timeout_ms: int) -> bool:
        self.stop()
        return True

    def points(self) -> int:
        """Samples drawn now (per curve), for a test."""
        x = self.curves[0].getData()[0] if self.curves else None
        return 0 if x is None else len(x)

    @Slot()
    def _on_timer_timeout(self) -> None:
        if self._recorder is None:
            return
        times, values = self._recorder.recent_samples()
        if not len(times):
            return
        step = max(1, len(times) // MAX_POINTS)
        x = times[::step] - time.monotonic()
        for n, curve in enumerate(self.curves):
            curve.setData(x, np.ascontiguousarray(values[::step, n]))
