"""The Calibration screen's pictures of where the board's corners fell: one view's frame with its
detected corners over it (:class:`CornerOverlay`), and the coverage grid coloured by how many
corners each cell holds (:class:`CoverageMap`).

Both draw in image pixels as OpenCV gives them (a pixel's centre on whole numbers, y down), so
corners from a calibration document are plotted as stored. Threading contract: GUI thread only; they
are handed decoded images, corners and counts, and read nothing themselves.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyqtgraph as pg
from PySide6.QtCore import QRectF

USED, REJECTED = "#4a7ebb", "#d04040"
EMPTY_CELL = (208, 64, 64, 95)  # red tint: no corner fell here yet; hold the board there next
CELL_RGB = (74, 126, 187)  # USED, stronger where more corners fell
BLANK = 235  # grey of the canvas drawn when there is no frame to show
Array = npt.NDArray[np.float64]


class _ImagePlot(pg.PlotWidget):
    """A plot in image pixels: y down, square pixels, no axes or menus (the numbers are
    in the captions)."""

    def __init__(self, name: str) -> None:
        super().__init__(background="w")
        self.setObjectName(name)
        item = self.getPlotItem()
        item.invertY(True)
        item.setAspectLocked(True)
        item.hideButtons()
        item.setMenuEnabled(False)
        for axis in ("left", "bottom"):
            item.hideAxis(axis)
        self.setMinimumSize(200, 120)

    def _fit(self, size: tuple[int, int]) -> None:
        self.getPlotItem().getViewBox().setRange(
            xRange=(-0.5, size[0] - 0.5), yRange=(-0.5, size[1] - 0.5), padding=0.02
        )


class CornerOverlay(_ImagePlot):
    """One view: its frame (or a blank canvas of the image size) with its corners; the first corner
    boxed so the board's orientation shows."""

    def __init__(self) -> None:
        super().__init__("cornerOverlay")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.corners = pg.ScatterPlotItem(size=8, brush=None)
        self.first = pg.ScatterPlotItem(size=22, symbol="s", brush=None)
        self.first_label = pg.TextItem(
            "first corner", anchor=(0, 1), fill=pg.mkBrush(255, 255, 255, 200)
        )
        for item in (self.image, self.corners, self.first, self.first_label):
            self.addItem(item)
        self.clear_view()

    def clear_view(self) -> None:
        self.image.clear()
        self.corners.clear()
        self.first.clear()
        self.first_label.hide()

    def show_view(
        self,
        frame: npt.NDArray[np.uint8] | None,
        size: tuple[int, int],
        corners: Array,
        rejected: bool,
    ) -> None:
        """``frame``: BGR rows × cols as decoded, or None for a blank canvas of ``size``
        (width, height)."""
        if frame is None:
            rgb = np.full((size[1], size[0], 3), BLANK, dtype=np.uint8)
        else:
            rgb = np.ascontiguousarray(frame[..., ::-1] if frame.ndim == 3 else frame)
        self.image.setImage(rgb, levels=(0, 255))
        # pixel (0, 0)'s centre at (0, 0)
        self.image.setRect(QRectF(-0.5, -0.5, rgb.shape[1], rgb.shape[0]))
        colour = REJECTED if rejected else USED
        self.corners.setData(pos=corners, pen=pg.mkPen(colour, width=2))
        if len(corners):
            self.first.setData(pos=corners[:1], pen=pg.mkPen(colour, width=3))
            self.first_label.setColor(colour)
            self.first_label.setPos(float(corners[0, 0]) + 12, float(corners[0, 1]) - 12)
            self.first_label.show()
        else:
            self.first.clear()
            self.first_label.hide()
        self._fit((rgb.shape[1], rgb.shape[0]))


class CoverageMap(_ImagePlot):
    """The coverage grid over the image area: each cell tinted by its corner count, empty cells red,
    every used corner a dot, and the grid lines."""

    def __init__(self) -> None:
        super().__init__("coverageMap")
        self.counts: npt.NDArray[np.int64] | None = None  # rows × cols, as drawn
        self.cells = pg.ImageItem(axisOrder="row-major")
        self.lines = pg.PlotDataItem(connect="pairs", pen=pg.mkPen("#808080", width=1))
        self.dots = pg.ScatterPlotItem(size=3, pen=None, brush=pg.mkBrush("#1f3f66"))
        for item in (self.cells, self.lines, self.dots):
            self.addItem(item)

    def clear_map(self) -> None:
        self.counts = None
        self.cells.clear()
        self.lines.setData([], [])
        self.dots.clear()

    def show_coverage(
        self, counts: npt.NDArray[np.int64], size: tuple[int, int], corners: Array
    ) -> None:
        """``counts``: rows × cols corners per cell over an image of ``size`` (width, height);
        ``corners``: N×2 px."""
        self.counts = counts
        self.cells.setImage(cell_colours(counts), levels=(0, 255))
        # the grid is laid over 0..width, 0..height
        self.cells.setRect(QRectF(0, 0, size[0], size[1]))
        rows, cols = counts.shape
        xs = [x for c in range(cols + 1) for x in (c * size[0] / cols,) * 2]
        ys = [y for _ in range(cols + 1) for y in (0.0, float(size[1]))]
        xs += [x for _ in range(rows + 1) for x in (0.0, float(size[0]))]
        ys += [y for r in range(rows + 1) for y in (r * size[1] / rows,) * 2]
        self.lines.setData(xs, ys)
        self.dots.setData(pos=corners)
        self._fit(size)


def cell_colours(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    """RGBA per cell (rows × cols × 4): empty cells red-tinted, the others blue, more opaque
    with more corners."""
    rgba = np.zeros((*counts.shape, 4), dtype=np.uint8)
    rgba[counts == 0] = EMPTY_CELL
    filled = counts > 0
    rgba[filled, :3] = CELL_RGB
    share = counts[filled] / max(int(counts.max()), 1)
    rgba[filled, 3] = np.round(50 + 140 * share).astype(np.uint8)
    return rgba
