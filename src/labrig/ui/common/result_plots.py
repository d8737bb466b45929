"""Trajectories (x against y, one curve per track) and speed against time, in the
result's own units; for a rig's 3-D result, the paths seen from above (x, y), from the front
(x, z) and from the side (y, z), in the rig's world (z up), beside the speed.

Axis labels always carry the units the result was computed in: mm and s through a valid
calibration, px and s without one, frames only for a recording without timestamps. Auto SI
prefixes are off, so "mm" never turns into "kmm" or a silent "×0.001".

Each track is drawn in its marker's colour as the video shows it (``colour_rgb``, read by the
tracker); a colour that would vanish on the white plot (contrast below 3:1, as WCAG measures it:
white, yellow, cyan markers) gets a dark outline under it. Results published before colours were
read fall back to evenly spaced hues.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QWidget

from labrig.results import TrackSeries
from labrig.ui.common.time_cursor import TimeCursor

BACKGROUND = (255, 255, 255)
OUTLINE = (51, 51, 51)  # the titles' grey
MIN_CONTRAST = 3.0  # WCAG's least contrast for graphics against their background


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2 contrast ratio of two sRGB colours (1 to 21)."""

    def luminance(rgb: tuple[int, int, int]) -> float:
        c = [v / 255 for v in rgb]
        lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def track_pens(track: TrackSeries, n: int, count: int) -> tuple[Any, Any]:
    """The pen of track ``n`` of ``count``, and the outline drawn under it (None when its colour
    stands out on the background by itself)."""
    if track.colour_rgb is None:
        return pg.mkPen(pg.intColor(n, hues=max(count, 3)), width=2), None
    outline = (
        pg.mkPen(OUTLINE, width=4)
        if contrast(track.colour_rgb, BACKGROUND) < MIN_CONTRAST
        else None
    )
    return pg.mkPen(track.colour_rgb, width=2), outline


def plot_widget(name: str, title: str) -> pg.PlotWidget:
    """A white plot with a grid and plain unit labels (no auto SI prefix)."""
    widget = pg.PlotWidget(background="w")
    widget.setObjectName(name)
    item = widget.getPlotItem()
    item.setTitle(title, color="#333")
    item.showGrid(x=True, y=True, alpha=0.3)
    for side in ("left", "bottom"):
        item.getAxis(side).enableAutoSIPrefix(False)
    return widget


class ResultPlots(QWidget):
    """The plots: trajectory and speed side by side, or for 3-D the top, front and side views and
    the speed in a row; :meth:`show_tracks` replaces what they show."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trajectory = plot_widget("trajectoryPlot", "Trajectories")
        self.front = plot_widget("frontPlot", "Front (x, z)")
        self.side = plot_widget("sidePlot", "Side (y, z)")
        # a circle drawn by a marker stays a circle
        for plot in (self.trajectory, self.front, self.side):
            plot.getPlotItem().setAspectLocked(True)
        self.speed = plot_widget("speedPlot", "Speed")
        # at the frame the Results page's player shows; a click there seeks it
        self.time_cursor = TimeCursor(self.speed, self)
        # where each track is at that time, on the trajectories (x, y)
        self.positions = pg.ScatterPlotItem(size=11, pen=pg.mkPen(OUTLINE, width=1.5))
        self.positions.setZValue(10)
        self._tracks: Sequence[TrackSeries] = ()
        self._plots = (self.trajectory, self.front, self.side, self.speed)
        self._legends = [
            # a pale backing and dark names: readable over the curves it lies on
            p.getPlotItem().addLegend(
                offset=(-10, 10), brush=(255, 255, 255, 210), labelTextColor=OUTLINE
            )
            for p in (self.trajectory, self.speed)
        ]
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._arrange(three_d=False)

    def _arrange(self, three_d: bool) -> None:
        for plot in self._plots:
            self._grid.removeWidget(plot)
        # in 3-D the views stand in one row: each is drawn to scale (aspect locked), so a tall
        # narrow cell shows more of it than a short wide one
        row = [self.trajectory, self.front, self.side] if three_d else [self.trajectory]
        for column, plot in enumerate([*row, self.speed]):
            self._grid.addWidget(plot, 0, column)
            self._grid.setColumnStretch(column, 1)
        for column in range(len(row) + 1, len(self._plots)):
            self._grid.setColumnStretch(column, 0)
        self.front.setVisible(three_d)
        self.side.setVisible(three_d)

    def clear(self) -> None:
        for plot in self._plots:
            plot.getPlotItem().clearPlots()
        for legend in self._legends:
            legend.clear()

    def set_time(self, t: float) -> None:
        """The frame the player shows, at time ``t``: the cursor on the speed plot, and a dot
        where each track is then on the trajectories (none for a track not seen at ``t``)."""
        self.time_cursor.set_time(t)
        spots = []
        for n, track in enumerate(self._tracks):
            if len(track.t) and track.t[0] <= t <= track.t[-1]:
                pen, _ = track_pens(track, n, len(self._tracks))
                x, y = np.interp(t, track.t, track.x), np.interp(t, track.t, track.y)
                spots.append({"pos": (float(x), float(y)), "brush": pen.color()})
        self.positions.setData(spots)
        if self.positions.scene() is None:
            self.trajectory.getPlotItem().addItem(self.positions, ignoreBounds=True)

    def show_tracks(self, tracks: Sequence[TrackSeries], units: tuple[str, str] | None) -> None:
        """One trajectory (three views of it in 3-D) and, when the track was long enough for
        speeds, one speed curve per track."""
        self.clear()
        self._tracks = tracks
        self.positions.setData([])
        three_d = bool(tracks) and all(t.z is not None for t in tracks)
        self._arrange(three_d)
        length, time = units or ("", "")
        traj, speed = self.trajectory.getPlotItem(), self.speed.getPlotItem()
        traj.setTitle("Top (x, y)" if three_d else "Trajectories", color="#333")
        # y grows downwards in image pixels and, for a board laid as the camera sees it, on the
        # plane too: the trajectories then look as they do in the video. A rig's world is the
        # floor's: y grows away from the front, z up
        traj.invertY(not three_d)
        traj.setLabel("bottom", f"x ({length})")
        traj.setLabel("left", f"y ({length})" if three_d else f"y ({length}, downwards)")
        for plot, across in ((self.front, "x"), (self.side, "y")):
            plot.getPlotItem().setLabel("bottom", f"{across} ({length})")
            plot.getPlotItem().setLabel("left", f"z ({length}, up)")
        speed.setLabel("bottom", f"time ({time})")
        per = "frame" if time == "frames" else time
        speed.setLabel("left", f"speed ({length}/{per})")
        for n, track in enumerate(tracks):
            pen, outline = track_pens(track, n, len(tracks))
            name = f"marker {track.track_id}" if three_d else f"track {track.track_id}"
            # the speed plot's legend names the markers: over a view to scale it hides the paths
            traj.plot(track.x, track.y, pen=pen, shadowPen=outline, name=None if three_d else name)
            if three_d and track.z is not None:
                self.front.plot(track.x, track.z, pen=pen, shadowPen=outline)
                self.side.plot(track.y, track.z, pen=pen, shadowPen=outline)
            if track.speed is not None:
                speed.plot(track.t, track.speed, pen=pen, shadowPen=outline, name=name)
