"""An instrument's tile in the rig grid: its last seconds of samples as a scrolling plot.

Each channel is one curve, named with its unit in a line under the plot; the x axis is seconds
before now (−5 to 0), so the newest samples are always at the right edge. The plot is redrawn ten
times a second from
:meth:`~labrig.capture.instrument_recorder.InstrumentRecorder.recent_samples`, which copies what the
grab thread kept and never makes it wait.

Threading contract: GUI thread only.
"""

from __future__ import annotations

import html
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from labrig.capture.instrument_recorder import PLOT_SECONDS, InstrumentRecorder
from labrig.capture.samples import SampleMode

REDRAW_MS = 100
# dark enough to read on the white plot (3:1 or more against it), told apart from each other
CHANNEL_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e0427a", "#4d4d4d")
MAX_POINTS = 1000  # per curve: a 1 kHz instrument's 5 s drawn at every fifth sample


class InstrumentTile(QWidget):
    """One instrument of the rig: its plot and a caption under it."""

    def __init__(self, place: str, mode: SampleMode, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.place, self.mode = place, mode
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("instrumentPlot")
        self.plot.setMinimumSize(160, 90)
        # its size is the grid's to give, as a camera's picture's is
        self.plot.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        item = self.plot.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.3)
        item.setXRange(-PLOT_SECONDS, 0, padding=0)
        item.setMouseEnabled(x=False, y=False)
        item.setLabel("bottom", "s before now")
        item.getAxis("bottom").enableAutoSIPrefix(False)
        item.getAxis("left").enableAutoSIPrefix(False)
        item.setTitle(f"{place}: starts with Record", color="#333")
        colours = [CHANNEL_COLOURS[n % len(CHANNEL_COLOURS)] for n in range(len(mode.channels))]
        self.curves = [item.plot([], [], pen=pg.mkPen(c, width=1)) for c in colours]
        # the channels' names under the plot, never over its curves
        self.channels = QLabel(
            " ".join(
                f'<span style="color:{c}">■</span>&nbsp;{html.escape(ch.header())}'
                for c, ch in zip(colours, mode.channels, strict=True)
            )
        )
        self.channels.setObjectName("instrumentChannels")
        self.channels.setWordWrap(True)
        self.caption = QLabel(place)
        self.caption.setObjectName("rigTileCaption")
        self._recorder: InstrumentRecorder | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.channels)
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
