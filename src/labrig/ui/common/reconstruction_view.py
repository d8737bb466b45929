"""A rig's 3-D reconstruction as a reviewer reads it: per marker how many frames were solved, its
gaps, how often only two cameras carried it, its reprojection error and which cameras saw it; and
over time, how many cameras solved each marker and how far their views fell from the point.

Everything comes from the result document's ``reconstruction`` summary. Threading contract: GUI
thread only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from labrig.results import TrackSeries
from labrig.ui.common.result_plots import plot_widget, track_pens
from labrig.ui.common.widgets import message_label

COLUMNS = (
    "Marker",
    "Frames",
    "Gaps (s)",
    "Two cameras only",
    "Reprojection RMS (px)",
    "p95 (px)",
    "Frames per camera",
)


class ReconstructionView(QWidget):
    """The "3-D reconstruction" tab; :meth:`show_reconstruction` fills it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = message_label("reconstructionSummary")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("reconstructionTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        # one line a cell, every column as wide as its text (scrolled sideways if need be)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.cameras = plot_widget("camerasPlot", "Cameras solving each marker")
        self.errors = plot_widget("reprojectionPlot", "Reprojection error")
        plots = QHBoxLayout()
        plots.addWidget(self.cameras, 1)
        plots.addWidget(self.errors, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addLayout(plots, 1)

    def clear(self) -> None:
        self.summary.setText("")
        self.table.setRowCount(0)
        for plot in (self.cameras, self.errors):
            plot.getPlotItem().clearPlots()

    def show_reconstruction(
        self, body: Mapping[str, Any], tracks: Sequence[TrackSeries], time_unit: str
    ) -> None:
        """``body``: the document's ``reconstruction``; ``tracks``: the result's series, for each
        marker's colour."""
        self.clear()
        cameras = list(body.get("cameras") or [])
        markers = list(body.get("markers") or [])
        unmatched = list(body.get("unmatched_tracks") or [])
        rms, p95 = body.get("error_rms_px"), body.get("error_p95_px")
        world = {"floor": "the floor board's axes", "first camera": "camera 1's axes"}.get(
            str(body.get("world")), "the rig calibration's axes"
        )
        self.summary.setText(
            f"{len(markers)} markers from {len(cameras)} cameras ({', '.join(cameras)}), in "
            f"{world}. Reprojection RMS {_px(rms)}, p95 {_px(p95)}. "
            + (
                f"{len(unmatched)} tracks seen by one camera only were left out."
                if unmatched
                else "Every track was matched in another camera."
            )
        )
        self.table.setRowCount(len(markers))
        for row, m in enumerate(markers):
            gaps = m.get("gaps_s") or []
            gap_s = sum(b - a for a, b in gaps)
            per_camera = ", ".join(f"{n} {c}" for n, c in (m.get("cameras_used") or {}).items())
            cells = (
                str(m["track_id"]),
                str(m["frames"]),
                f"{len(gaps)} ({gap_s:.2f} s)" if gaps else "none",
                f"{m['two_camera_share']:.0%}",
                _px(m.get("error_rms_px"), unit=False),
                _px(m.get("error_p95_px"), unit=False),
                per_camera,
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if 0 < column < len(cells) - 1:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, column, item)
        colours = {t.track_id: t for t in tracks}
        cams, errs = self.cameras.getPlotItem(), self.errors.getPlotItem()
        cams.setLabel("left", "cameras")
        cams.setLabel("bottom", f"time ({time_unit})")
        errs.setLabel("left", "error (px)")
        errs.setLabel("bottom", f"time ({time_unit})")
        for n, m in enumerate(markers):
            series = colours.get(m["track_id"])
            pen, outline = (
                track_pens(series, n, len(markers)) if series is not None else (None, None)
            )
            t = np.asarray(m.get("t") or [], dtype=np.float64)
            if not len(t):
                continue
            counts = np.asarray(m["cameras"], dtype=np.float64)
            # small offsets keep equal counts of several markers apart
            cams.plot(t, counts + 0.04 * (n - len(markers) / 2), pen=pen, shadowPen=outline)
            errs.plot(t, np.asarray(m["error_px"], dtype=np.float64), pen=pen, shadowPen=outline)
        cams.setYRange(1.5, max(len(cameras), 2) + 0.5)


def _px(value: Any, unit: bool = True) -> str:
    if value is None:
        return "—"
    return f"{float(value):.2f}" + (" px" if unit else "")
