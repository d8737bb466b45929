"""One stored calibration: its verdict with reasons, binding and age, figures, per-view errors, a
coverage map, and one view's frame with its detected corners over it.

A view is picked by clicking its bar or in the view list (keyboard: the list's arrow keys). The
widget reads nothing: when the picked view's frame is in a stored recording it emits ``viewPicked``
and the page reads the frame off the GUI thread and hands it to :meth:`CalibrationView.show_frame`.
A calibration stored before Labrig kept the corners (``labrig.calibration/1``) shows its figures and
errors, and says to calibrate again for the map. Threading contract: GUI thread only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyqtgraph as pg
from pyqtgraph.GraphicsScene.mouseEvents import MouseClickEvent
from PySide6.QtCore import QSignalBlocker, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from labrig.calibration import CalibrationDetail, Validity, ViewError
from labrig.store import utcnow
from labrig.ui.calibration.overlays import REJECTED, USED, CornerOverlay, CoverageMap
from labrig.ui.common.widgets import message_label, title_over_body

VIEW_AXIS = "view (frame number or file number)"
MAX_TICKS = 15  # more view numbers than this crowd the axis: label every n-th bar only
VERDICTS = {
    Validity.IN_USE: (
        "VALID",
        "in use: analysis of this device and mode is in millimetres through it",  # with a plane
        "#1d7a1d",
    ),
    Validity.SUPERSEDED: (
        "VALID",
        "superseded: a newer calibration of this device and mode is used",
        "#1d7a1d",
    ),
    Validity.EXPIRED: (
        "EXPIRED",
        "older than its validity period: calibrate the device again",
        "#a06000",
    ),
    Validity.NOT_VALID: (
        "NOT VALID",
        "never used for analysis; fix what the reasons say and calibrate again",
        "#c03030",
    ),
    Validity.DEVICE_CHANGED: (
        "NO LONGER USED",
        "a device or a mode it was bound to changed since: record the board again and calibrate",
        "#a06000",
    ),
}
IN_USE_WITHOUT_PLANE = (
    "in use: analysis of this device and mode corrects the lens through it, but stays in pixels "
    "(no plane view: calibrate again with a plane recording for millimetres)"
)
NO_CORNERS_NOTE = (
    "This calibration was made before Labrig kept where the corners fell, so neither the coverage "
    "map nor a view's corners can be drawn (the share of grid cells holding a corner was kept): "
    "calibrate again to see them."
)
COVERAGE_CAPTION = (
    "Corners of the used views per grid cell (more corners, deeper blue). <span "
    "style='color:{red}'>Red cells hold none</span>: hold the board there next."
)
NO_FRAME = (
    "no frame to show: the views were image or video files given by name, which Labrig does not "
    "keep; the corners are drawn on a blank {w}×{h} canvas"
)


def _tick(name: str) -> str:
    """``board.avi#120`` → ``120``, ``board-90`` → ``90``: the number is what tells views of one
    recording apart (the full names are in the calibration's document)."""
    number = re.search(r"(\d+)\D*$", name)
    return number.group(1) if number else name[:8]


def _short(name: str) -> str:
    """A stored segment is named by its SHA-256: 12 hex digits tell it apart on screen."""
    return re.sub(r"\b([0-9a-f]{12})[0-9a-f]{52}\b", r"\1…", name)


class CalibrationView(QWidget):
    """The detail half of the Calibration page."""

    # a view whose frame is in a stored recording was picked: read it (GUI thread)
    viewPicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.current: CalibrationDetail | None = None
        self.picked: str | None = None  # the view shown in the overlay (or being read)
        self.title = message_label("calibrationTitle")
        self.binding = message_label("binding")
        self.verdict = message_label("verdict")
        self.reasons = message_label("verdictReasons")
        self.figures = {
            name: message_label(name)
            for name in ("rms", "views", "tilts", "intrinsics", "distortion", "scale")
        }
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("viewErrorPlot")
        self.plot.getPlotItem().setLabel("left", "RMS error (px)")
        self.plot.getPlotItem().setLabel("bottom", VIEW_AXIS)
        self.plot.getPlotItem().getAxis("left").enableAutoSIPrefix(False)
        self.plot.setMinimumHeight(140)
        self.bars: pg.BarGraphItem | None = None
        self.legend = QLabel(
            f"<span style='color:{USED}'>■</span> used &nbsp; <span "
            f"style='color:{REJECTED}'>■</span> rejected: error far above the others; the solve "
            "ran again without it"
        )
        self.legend.setWordWrap(True)
        self.coverage = QProgressBar()
        self.coverage.setObjectName("coverageBar")
        self.coverage_note = message_label("coverageNote")
        self.coverage_map = CoverageMap()
        self.coverage_caption = message_label("coverageCaption")
        self.coverage_caption.setText(COVERAGE_CAPTION.format(red=REJECTED))
        self.coverage_heading = QLabel("<b>Coverage map</b>")
        self.view_list = QComboBox()
        self.view_list.setObjectName("viewList")
        self.view_list.setAccessibleName("View")
        self.view_list.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        # names are long: the list opens wide enough to read them
        self.view_list.setMinimumContentsLength(16)
        self.overlay = CornerOverlay()
        self.frame_caption = message_label("frameCaption")
        self._lay_out()
        self.view_list.currentIndexChanged.connect(self._on_view_list_current_index_changed)
        self.plot.scene().sigMouseClicked.connect(self._on_plot_scene_clicked)
        self.show_message("Select a calibration to see its verdict and errors.")

    def _lay_out(self) -> None:
        form = QFormLayout()
        for caption, name in (
            ("RMS", "rms"),
            ("Views", "views"),
            ("Board tilts", "tilts"),
            ("Intrinsics", "intrinsics"),
            ("Distortion", "distortion"),
            ("Scale", "scale"),
        ):
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
        body.addLayout(self._pictures(), 2)
        self.placeholder = title_over_body(self, self.title, self.body)

    def _pictures(self) -> QHBoxLayout:
        """The picked view's frame with its corners beside the coverage map: both in image
        pixels, side by side."""
        picker = QHBoxLayout()
        picker.addWidget(QLabel("<b>View</b>"))
        picker.addWidget(self.view_list, 1)
        frame = QVBoxLayout()
        frame.addLayout(picker)
        frame.addWidget(self.overlay, 1)
        frame.addWidget(self.frame_caption)
        coverage = QVBoxLayout()
        coverage.addWidget(self.coverage_heading)
        coverage.addWidget(self.coverage_map, 1)
        coverage.addWidget(self.coverage_caption)
        row = QHBoxLayout()
        row.addLayout(frame, 1)
        row.addLayout(coverage, 1)
        return row

    def show_message(self, text: str) -> None:
        self.current = None
        self.title.setText(text)
        for label in (self.binding, self.verdict, self.reasons, *self.figures.values()):
            label.clear()
        self.reasons.hide()
        self.coverage.reset()
        self._draw_bars([])
        self._show_views(None)
        self.body.hide()
        self.placeholder.show()

    def show_calibration(self, detail: CalibrationDetail) -> None:
        s, doc = detail.summary, detail.document
        self.title.setText(
            f"<h3>Calibration {s.calibration_id[:12]}…</h3>{doc['board']['kind']} board, "
            f"{doc['image_size'][0]}×{doc['image_size'][1]} px images"
        )
        self.binding.setText(self._binding_words(detail))
        word, meaning, colour = VERDICTS[s.validity]
        if s.validity is Validity.IN_USE and not s.has_plane:
            meaning = IN_USE_WITHOUT_PLANE
        self.verdict.setText(f"<b style='color:{colour}'>{word}</b> — {meaning}")
        self.reasons.setText("\n".join(f"• {code}: {message}" for code, message in detail.reasons))
        self.reasons.setVisible(bool(detail.reasons))
        self._show_figures(detail)
        self._draw_bars(detail.views)
        self._show_coverage_map(detail)
        self.placeholder.hide()
        self.body.show()
        self.current = detail
        self._show_views(detail)

    @staticmethod
    def _binding_words(detail: CalibrationDetail) -> str:
        s = detail.summary
        age = s.age(utcnow())
        made = (
            f"calibrated {s.created_at.astimezone():%Y-%m-%d %H:%M} "
            f"({age if age == 'just now' else age + ' ago'})"
        )
        if s.valid_until is None:
            return f"Made for {s.device_id} in {s.mode}, {made}; not bound: it did not validate."
        return (
            f"Bound to {s.device_id} in {s.mode}, {made}; "
            f"valid until {s.valid_until.astimezone():%Y-%m-%d %H:%M}."
        )

    def _show_figures(self, detail: CalibrationDetail) -> None:
        doc, t = detail.document, detail.thresholds
        rejected = len(doc.get("rejected", []))
        self.figures["rms"].setText(f"{doc['rms_px']:.3f} px (limit {t.get('max_rms_px', 0):g} px)")
        self.figures["views"].setText(
            f"{doc['view_count']} used, {rejected} rejected, {len(doc.get('skipped', []))} "
            f"without the board (at least {t.get('min_views', 0)} needed)"
        )
        self.figures["tilts"].setText(
            f"views differ by up to {doc['pose_spread_deg']:.1f}° "
            f"({t.get('min_pose_spread_deg', 0):g}° needed)"
        )
        self.figures["intrinsics"].setText(
            f"fx {doc['fx']:.1f} (± {doc['focal_std_px']:.2f}) · fy {doc['fy']:.1f} · "
            f"cx {doc['cx']:.1f} · cy {doc['cy']:.1f} px"
        )
        self.figures["distortion"].setText(
            "  ".join(f"{k} {v:+.4f}" for k, v in doc["distortion"].items())
        )
        self.figures["scale"].setText(
            "a plane homography is stored: analysis outputs are in mm"
            if detail.summary.has_plane
            else "no plane view was given: analysis outputs stay in pixels"
        )
        cols, rows = doc.get("coverage_grid", [0, 0])
        self.coverage.setRange(0, 100)
        self.coverage.setValue(round(doc["coverage"] * 100))
        self.coverage.setFormat(
            f"{doc['coverage']:.0%} of the {cols}×{rows} grid cells hold a corner "
            f"({t.get('min_coverage', 0):.0%} needed)"
        )

    def _draw_bars(self, views: Sequence[ViewError]) -> None:
        item = self.plot.getPlotItem()
        item.clear()
        self.bars = None
        if not views:
            return
        self.bars = pg.BarGraphItem(
            x=list(range(len(views))),
            height=[v.error_px for v in views],
            width=0.8,
            brushes=[pg.mkBrush(REJECTED if v.rejected else USED) for v in views],
            pen=pg.mkPen(None),
        )
        item.addItem(self.bars)
        limits = [v.limit_px for v in views if v.limit_px is not None]
        if limits:
            line = pg.InfiniteLine(
                pos=max(limits),
                angle=0,
                pen=pg.mkPen(REJECTED, style=Qt.PenStyle.DashLine),
                label="rejection limit",
                labelOpts={"position": 0.9, "color": REJECTED},
            )
            item.addItem(line)
        step = max(1, -(-len(views) // MAX_TICKS))
        ticks = [_tick(v.name) for v in views]
        # e.g. frame numbers that restart in each segment: number the views instead
        if len(set(ticks)) < len(ticks):
            ticks = [str(i + 1) for i in range(len(views))]
            item.setLabel("bottom", "view, in capture order (names in the calibration's document)")
        else:
            item.setLabel("bottom", VIEW_AXIS)
        item.getAxis("bottom").setTicks(
            [[(i, ticks[i]) for i in range(len(views)) if i % step == 0]]
        )

    def _show_coverage_map(self, detail: CalibrationDetail) -> None:
        counts, corners = detail.coverage_counts(), detail.used_corners()
        if counts is None or corners is None:
            self.coverage_map.clear_map()
        else:
            self.coverage_map.show_coverage(counts, detail.image_size, corners)
        for widget in (self.coverage_heading, self.coverage_map, self.coverage_caption):
            widget.setVisible(counts is not None)
        self.coverage_note.setText("" if detail.has_corners else NO_CORNERS_NOTE)
        self.coverage_note.setVisible(not detail.has_corners)

    def _show_views(self, detail: CalibrationDetail | None) -> None:
        """Fill the view list in the bars' order and pick the first view."""
        self.picked = None
        self.overlay.clear_view()
        self.frame_caption.clear()
        with QSignalBlocker(self.view_list):
            self.view_list.clear()
            for i, view in enumerate(detail.views if detail else []):
                state = f"rejected, above {view.limit_px:.3f} px" if view.rejected else "used"
                self.view_list.addItem(
                    f"{i + 1}. {_short(view.name)} · {view.error_px:.3f} px · {state}", view.name
                )
        if detail is not None and detail.views:
            self.view_list.setCurrentIndex(0)
            self._pick(0)

    @Slot(int)
    def _on_view_list_current_index_changed(self, index: int) -> None:
        if self.current is not None and 0 <= index < len(self.current.views):
            self._pick(index)

    def _on_plot_scene_clicked(self, event: MouseClickEvent) -> None:
        """A left click anywhere in a bar's column picks that view (short bars are hard to hit)."""
        box = self.plot.getPlotItem().getViewBox()
        position = event.scenePos()
        if (
            self.current is None
            or event.button() != Qt.MouseButton.LeftButton
            or not box.sceneBoundingRect().contains(position)
        ):
            return
        index = round(box.mapSceneToView(position).x())
        if 0 <= index < len(self.current.views):
            self.view_list.setCurrentIndex(index)  # its signal picks the view
            self.view_list.setFocus()  # so the arrow keys go on from here

    def _pick(self, index: int) -> None:
        assert self.current is not None
        detail, view = self.current, self.current.views[index]
        self.picked = view.name
        self._outline_bar(index)
        if view.corners is None:
            self.overlay.clear_view()
            self.frame_caption.setText(f"{self._describe(view)}. {NO_CORNERS_NOTE}")
        elif detail.source is None:
            self._draw_view(
                view, None, NO_FRAME.format(w=detail.image_size[0], h=detail.image_size[1])
            )
        else:
            self.frame_caption.setText(f"{self._describe(view)} · reading the frame…")
            self.viewPicked.emit(view.name)

    def show_frame(
        self, calibration_id: str, view_name: str, frame: npt.NDArray[np.uint8] | None
    ) -> None:
        """The frame read for ``view_name``; ignored unless that view of that calibration is
        still the one picked."""
        if self._still_picked(calibration_id, view_name):
            assert self.current is not None
            source, (width, height) = self.current.source, self.current.image_size
            where = (
                f"frame {view_name.rpartition('#')[2]} of recording {source.capture_id[:8]}"
                if frame is not None and source is not None
                else NO_FRAME.format(w=width, h=height)
            )
            self._draw_view(self.current.view(view_name), frame, where)

    def show_frame_failed(self, calibration_id: str, view_name: str, why: str) -> None:
        """The frame could not be read: the corners on a blank canvas, and why."""
        if self._still_picked(calibration_id, view_name):
            assert self.current is not None
            self._draw_view(self.current.view(view_name), None, f"the frame cannot be shown: {why}")

    def _still_picked(self, calibration_id: str, view_name: str) -> bool:
        return (
            self.current is not None
            and self.current.summary.calibration_id == calibration_id
            and self.picked == view_name
        )

    def _draw_view(self, view: ViewError, frame: npt.NDArray[np.uint8] | None, where: str) -> None:
        assert self.current is not None and view.corners is not None
        self.overlay.show_view(frame, self.current.image_size, view.corners, view.rejected)
        first = f", the first (id {view.ids[0]}) boxed" if view.ids else ""
        self.frame_caption.setText(
            f"{self._describe(view)} · {len(view.corners)} corners{first} · {where}"
        )

    @staticmethod
    def _describe(view: ViewError) -> str:
        state = (
            f"<span style='color:{REJECTED}'>rejected</span> (limit {view.limit_px:.3f} px)"
            if view.rejected
            else f"<span style='color:{USED}'>used</span>"
        )
        return f"<b>{_short(view.name)}</b> · {view.error_px:.3f} px · {state}"

    def _outline_bar(self, index: int) -> None:
        if self.bars is not None:
            count = len(self.bars.opts["height"])
            self.bars.setOpts(
                pens=[
                    pg.mkPen("#202020", width=2) if i == index else pg.mkPen(None)
                    for i in range(count)
                ]
            )
