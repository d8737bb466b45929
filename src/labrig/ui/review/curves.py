"""The speed of each track on the Review page: in force (solid, in the marker's colour, as the
player draws it) and, where a correction changed it, the automatic speed dashed beside it; a
cursor at the time of the frame shown, and a click on the plot seeks the video to that time.

Threading contract: GUI thread only.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from labrig.results import TrackSeries
from labrig.review.player import Curves
from labrig.ui.common.result_plots import plot_widget, track_pens
from labrig.ui.common.time_cursor import TimeCursor


def _differs(a: TrackSeries, b: TrackSeries | None) -> bool:
    if b is None or a.speed is None or b.speed is None:
        return b is None or (a.speed is None) != (b.speed is None)
    return a.t.shape != b.t.shape or not (
        np.allclose(a.t, b.t) and np.allclose(a.speed, b.speed, equal_nan=True)
    )


def _key(track_id: Any, colour: QColor, pale: bool) -> str:
    """A track's colour and id for the key (a pale colour on a dark ground, as the plot outlines
    it)."""
    ground = " background-color: #333;" if pale else ""
    mark = f'<span style="color: {colour.name()};{ground}">&#9632;</span>'
    return f"{mark}&nbsp;{html.escape(str(track_id))}"


class SpeedCurves(QWidget):
    """See the module docstring; ``time_cursor.clicked`` gives the time clicked, in the curves'
    time units."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = plot_widget("reviewSpeedPlot", "Speed")
        self.item = self.plot.getPlotItem()
        self.time_cursor = TimeCursor(self.plot, self)
        self.note = QLabel("")
        self.note.setObjectName("speedNote")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.RichText)
        self.changed: list[str] = []  # the tracks whose speed a correction changed
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.note)
        self.show_curves(None)

    def show_curves(self, curves: Curves | None) -> None:
        self.item.clearPlots()
        self.changed = []
        if curves is None or (not curves.effective and not curves.automatic):
            self.note.setText("No tracked speeds to show for this result.")
            return
        length, time = curves.units
        per = "frame" if time == "frames" else time
        self.item.setLabel("bottom", f"time ({time})")
        self.item.setLabel("left", f"speed ({length}/{per})")
        effective = {t.track_id: t for t in curves.effective}
        count = len(curves.automatic)
        keys = []  # the plot is too narrow for a legend: the key is written under it
        for n, automatic in enumerate(curves.automatic):
            pen, outline = track_pens(automatic, n, count)
            keys.append(_key(automatic.track_id, pen.color(), outline is not None))
            now = effective.get(automatic.track_id)
            if _differs(automatic, now) and automatic.speed is not None:
                self.changed.append(str(automatic.track_id))
                dashed = pg.mkPen(pen.color(), width=1.5, style=Qt.PenStyle.DashLine)
                self.item.plot(automatic.t, automatic.speed, pen=dashed)
            if now is not None and now.speed is not None:
                self.item.plot(now.t, now.speed, pen=pen, shadowPen=outline)
        self.time_cursor.attach()
        peaks = [
            float(np.nanmax(c.speed))
            for c in (*curves.automatic, *curves.effective)
            if c.speed is not None and len(c.speed)
        ]
        if peaks:
            self.item.setYRange(0.0, max(max(peaks), 1e-9) * 1.1, padding=0.0)
        changed = (
            f"dashed: the automatic speed where a correction changed it (track "
            f"{', '.join(self.changed)})."
            if self.changed
            else "no correction changes a speed yet."
        )
        self.note.setText(f"Tracks {' '.join(keys)} in force; {changed}")

    def set_time(self, t: float) -> None:
        """Put the cursor at ``t`` (the frame shown)."""
        self.time_cursor.set_time(t)
