"""One stored calibration: its verdict with reasons, binding and age, figures, per-view errors and coverage.

A stored calibration keeps the share of the coverage grid its corners reached but not where they fell, so the
coverage is shown as that share against the threshold, and the page says that no map can be drawn.
Threading contract: GUI thread only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

from labrig.analysis.calibration_views import CalibrationDetail, Validity, ViewError
from labrig.store.types import utcnow

USED, REJECTED = "#4a7ebb", "#d04040"
VIEW_AXIS = "view (frame number or file number)"
MAX_TICKS = 15  # more view numbers than this crowd the axis: label every n-th bar only
VERDICTS = {
    Validity.IN_USE: ("VALID", "in use: analysis of this device and mode is in millimetres through it", "#1d7a1d"),
    Validity.SUPERSEDED: ("VALID", "superseded: a newer calibration of this device and mode is used", "#1d7a1d"),
    Validity.EXPIRED: ("EXPIRED", "older than its validity period: calibrate the device again", "#a06000"),
    Validity.NOT_VALID: ("NOT VALID", "never used for analysis; fix what the reasons say and calibrate again",
                         "#c03030"),
}
COVERAGE_NOTE = ("Where the corners fell is not stored with a calibration, so no coverage map can be drawn: only "
                 "the share of grid cells that held a detected corner is kept.")


def _label(name: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _tick(name: str) -> str:
    """``board.avi#120`` → ``120``, ``board-90`` → ``90``: the number is what tells views of one recording apart
    (the full names are in the calibration's document)."""
    number = re.search(r"(\d+)\D*$", name)
    return number.group(1) if number else name[:8]


class CalibrationView(QWidget):
    """The detail half of the Calibration page."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.current: CalibrationDetail | None = None
        self.title = _label("calibrationTitle")
        self.binding = _label("binding")
        self.verdict = _label("verdict")
        self.reasons = _label("verdictReasons")
        self.figures = {name: _label(name) for name in ("rms", "views", "tilts", "intrinsics", "distortion", "scale")}
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("viewErrorPlot")
        self.plot.getPlotItem().setLabel("left", "RMS reprojection error (px)")
        self.plot.getPlotItem().setLabel("bottom", VIEW_AXIS)
        self.plot.getPlotItem().getAxis("left").enableAutoSIPrefix(False)
        self.plot.setMinimumHeight(220)
        self.bars: pg.BarGraphItem | None = None
        self.legend = QLabel(f"<span style='color:{USED}'>■</span> used &nbsp; <span style='color:{REJECTED}'>■</span>"
                             " rejected: error far above the others; the solve ran again without it")
        self.coverage = QProgressBar()
        self.coverage.setObjectName("coverageBar")
        self.coverage_note = _label("coverageNote")
        self.coverage_note.setText(COVERAGE_NOTE)
        self._lay_out()
        self.show_message("Select a calibration to see its verdict and errors.")

    def _lay_out(self) -> None:
        form = QFormLayout()
        for caption, name in (("RMS", "rms"), ("Views", "views"), ("Board tilts", "tilts"),
                              ("Intrinsics", "intrinsics"), ("Distortion", "distortion"), ("Scale", "scale")):
            form.addRow(caption, self.figures[name])
        form.addRow("Coverage", self.coverage)
        self.body = QWidget()  # everything but the title: hidden while no calibration is shown
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        for widget in (self.binding, self.verdict, self.reasons):
            body.addWidget(widget)
        body.addLayout(form)
        body.addWidget(self.coverage_note)
        body.addWidget(self.plot, 1)
        body.addWidget(self.legend)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.body, 1)
        self.placeholder = QWidget()  # keeps the title at the top while the body is hidden
        layout.addWidget(self.placeholder, 1)

    def show_message(self, text: str) -> None:
        self.current = None
        self.title.setText(text)
        for label in (self.binding, self.verdict, self.reasons, *self.figures.values()):
            label.clear()
        self.reasons.hide()
        self.coverage.reset()
        self._draw_bars([])
        self.body.hide()
        self.placeholder.show()

    def show_calibration(self, detail: CalibrationDetail) -> None:
        s, doc = detail.summary, detail.document
        self.title.setText(f"<h3>Calibration {s.calibration_id[:12]}…</h3>{doc['board']['kind']} board, "
                           f"{doc['image_size'][0]}×{doc['image_size'][1]} px images")
        self.binding.setText(self._binding_words(detail))
        word, meaning, colour = VERDICTS[s.validity]
        self.verdict.setText(f"<b style='color:{colour}'>{word}</b> — {meaning}")
        self.reasons.setText("\n".join(f"• {code}: {message}" for code, message in detail.reasons))
        self.reasons.setVisible(bool(detail.reasons))
        self._show_figures(detail)
        self._draw_bars(detail.views)
        self.placeholder.hide()
        self.body.show()
        self.current = detail

    @staticmethod
    def _binding_words(detail: CalibrationDetail) -> str:
        s = detail.summary
        age = s.age(utcnow())
        made = f"calibrated {s.created_at.astimezone():%Y-%m-%d %H:%M} ({age if age == 'just now' else age + ' ago'})"
        if s.valid_until is None:
            return f"Made for {s.device_id} in {s.mode}, {made}; not bound: it did not validate."
        return f"Bound to {s.device_id} in {s.mode}, {made}; valid until {s.valid_until.astimezone():%Y-%m-%d %H:%M}."

    def _show_figures(self, detail: CalibrationDetail) -> None:
        doc, t = detail.document, detail.thresholds
        rejected = len(doc.get("rejected", []))
        self.figures["rms"].setText(f"{doc['rms_px']:.3f} px (limit {t.get('max_rms_px', 0):g} px)")
        self.figures["views"].setText(f"{doc['view_count']} used, {rejected} rejected, {len(doc.get('skipped', []))} "
                                      f"without the board (at least {t.get('min_views', 0)} needed)")
        self.figures["tilts"].setText(f"views differ by up to {doc['pose_spread_deg']:.1f}° "
                                      f"({t.get('min_pose_spread_deg', 0):g}° needed)")
        self.figures["intrinsics"].setText(f"fx {doc['fx']:.1f} (± {doc['focal_std_px']:.2f}) · fy {doc['fy']:.1f} · "
                                           f"cx {doc['cx']:.1f} · cy {doc['cy']:.1f} px")
        self.figures["distortion"].setText("  ".join(f"{k} {v:+.4f}" for k, v in doc["distortion"].items()))
        self.figures["scale"].setText("a plane homography is stored: analysis outputs are in mm"
                                      if detail.summary.has_plane else
                                      "no plane view was given: analysis outputs stay in pixels")
        cols, rows = doc.get("coverage_grid", [0, 0])
        self.coverage.setRange(0, 100)
        self.coverage.setValue(round(doc["coverage"] * 100))
        self.coverage.setFormat(f"{doc['coverage']:.0%} of the {cols}×{rows} grid cells hold a corner "
                                f"({t.get('min_coverage', 0):.0%} needed)")

    def _draw_bars(self, views: Sequence[ViewError]) -> None:
        item = self.plot.getPlotItem()
        item.clear()
        self.bars = None
        if not views:
            return
        self.bars = pg.BarGraphItem(x=list(range(len(views))), height=[v.error_px for v in views], width=0.8,
                                    brushes=[pg.mkBrush(REJECTED if v.rejected else USED) for v in views],
                                    pen=pg.mkPen(None))
        item.addItem(self.bars)
        limits = [v.limit_px for v in views if v.limit_px is not None]
        if limits:
            line = pg.InfiniteLine(pos=max(limits), angle=0, pen=pg.mkPen(REJECTED, style=Qt.PenStyle.DashLine),
                                   label="rejection limit", labelOpts={"position": 0.9, "color": REJECTED})
            item.addItem(line)
        step = max(1, -(-len(views) // MAX_TICKS))
        ticks = [_tick(v.name) for v in views]
        if len(set(ticks)) < len(ticks):  # e.g. frame numbers that restart in each segment: number the views instead
            ticks = [str(i + 1) for i in range(len(views))]
            item.setLabel("bottom", "view, in capture order (names in the calibration's document)")
        else:
            item.setLabel("bottom", VIEW_AXIS)
        item.getAxis("bottom").setTicks([[(i, ticks[i]) for i in range(len(views)) if i % step == 0]])
