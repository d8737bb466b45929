"""The speed of each track on the Review page: in force (solid, in the marker's colour, as the
player draws it) and, where a correction changed it, the automatic speed dashed beside it; a
cursor at the time of the frame shown, and a click on the plot seeks the video to that time.

Threading contract: GUI thread only.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from labrig.results import TrackSeries
from labrig.review.player import Curves
from labrig.ui.common.result_plots import OUTLINE, plot_widget, track_pens
from labrig.ui.common.time_cursor import TimeCursor


def _differs(a: TrackSeries, b: TrackSeries | None) -> bool:
    if b is None or a.speed is None or b.speed is None:
        return b is None or (a.speed is None) != (b.speed is None)
    return a.t.shape != b.t.shape or not (
        np.allclose(a.t, b.t) and np.allclose(a.speed, b.speed, equal_nan=True)
    )


class SpeedCurves(QWidget):
    """See the module docstring; ``time_cursor.clicked`` gives the time clicked, in the curves'
    time units."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = plot_widget("reviewSpeedPlot", "Speed")
        self.item = self.plot.getPlotItem()
        # in columns along the top: a legend down the side would hide the curves' ends
        self.legend = self.item.addLegend(
            offset=(10, 5), brush=(255, 255, 255, 210), labelTextColor=OUTLINE, colCount=2
        )
        self.time_cursor = TimeCursor(self.plot, self)
        self.note = QLabel("")
        self.note.setObjectName("speedNote")
        self.note.setWordWrap(True)
        self.changed: list[str] = []  # the tracks whose speed a correction changed
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.note)
        self.show_curves(None)

    def show_curves(self, curves: Curves | None) -> None:
        self.item.clearPlots()
        self.legend.clear()
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
        for n, automatic in enumerate(curves.automatic):
            pen, outline = track_pens(automatic, n, count)
            now = effective.get(automatic.track_id)
            if _differs(automatic, now) and automatic.speed is not None:
                self.changed.append(str(automatic.track_id))
                dashed = pg.mkPen(pen.color(), width=1.5, style=Qt.PenStyle.DashLine)
                self.item.plot(
                    automatic.t,
                    automatic.speed,
                    pen=dashed,
                    name=f"track {automatic.track_id}, automatic",
                )
            if now is not None and now.speed is not None:
                self.item.plot(
                    now.t, now.speed, pen=pen, shadowPen=outline, name=f"track {now.track_id}"
                )
        self.time_cursor.attach()
        peaks = [
            float(np.nanmax(c.speed))
            for c in (*curves.automatic, *curves.effective)
            if c.speed is not None and len(c.speed)
        ]
        if peaks:  # headroom over the highest peak for the legend along the top
            self.item.setYRange(0.0, max(max(peaks), 1e-9) * 1.6, padding=0.0)
        self.note.setText(
            f"Dashed: the automatic speed where a correction changed it "
            f"(track {', '.join(self.changed)})."
            if self.changed
            else "No correction changes a speed yet: each curve is the automatic one."
        )

    def set_time(self, t: float) -> None:
        """Put the cursor at ``t`` (the frame shown)."""
        self.time_cursor.set_time(t)
