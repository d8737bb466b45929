"""One stored rig calibration: its verdict with what to do for each failed threshold, what it is
bound to, its figures and board check, and in tabs each camera's figures (with the views it shares
with every other camera), each camera's coverage map, every view's error with the views dropped,
where the cameras stand (from above and from the side) and every pair of cameras.

The widget reads nothing: the page hands it a
:class:`~labrig.calibration.rig_service.RigCalibrationDetail`, read off the GUI thread (the picture
of where the cameras stand is drawn here, to the room it has). Threading contract: GUI thread only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QImage, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QGridLayout,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from labrig.calibration import RigCalibrationDetail
from labrig.calibration.rig_plot import rig_views_image
from labrig.domain.palette import SERIES_BGR
from labrig.store import utcnow
from labrig.ui.calibration.overlays import REJECTED, CoverageMap
from labrig.ui.calibration.view import COVERAGE_CAPTION, VERDICTS
from labrig.ui.common.widgets import message_label, title_over_body

# each camera's device is in the binding line above the table; its views shared with each other
# camera, in the Pairs tab and in the Shared cell's tooltip
CAMERA_COLUMNS = ("Camera", "RMS (px)", "Lens (px)", "Views used", "Dropped", "Coverage", "Shared")
PAIR_COLUMNS = ("Cameras", "Apart (mm)", "Axes apart (°)", "Shared views")
COLOURS = tuple(f"#{r:02x}{g:02x}{b:02x}" for b, g, r in SERIES_BGR)
COVERAGE_COLUMNS = 2  # coverage maps per row


def _table(name: str, columns: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(columns))
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.horizontalHeader().setStretchLastSection(True)
    table.setWordWrap(False)
    return table


def _fill(
    table: QTableWidget, rows: list[tuple[str, ...]], tips: list[dict[int, str]] | None = None
) -> None:
    """``rows`` of cells; ``tips``: a row's tooltips by column (else a cell's tooltip is its
    text)."""
    table.setRowCount(len(rows))
    for r, cells in enumerate(rows):
        for c, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setToolTip((tips[r] if tips else {}).get(c, text))
            table.setItem(r, c, item)
    table.resizeColumnsToContents()


class RigPicture(QLabel):
    """Where the cameras stand, from above and from the side, drawn again to the room the label
    has whenever it is resized (a moment after the last resize), so the lettering stays readable."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.setObjectName(name)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.setMinimumSize(320, 160)
        self.document: dict[str, Any] | None = None
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(80)
        self._redraw.timeout.connect(self._draw)

    def show_document(self, document: dict[str, Any]) -> None:
        self.document = document
        self._draw()

    def _draw(self) -> None:
        if self.document is None:
            self.clear()
            return
        width = max(self.width() // 2, 1)  # each view no taller than it is wide
        panel = (width, max(min(self.height(), width), 1))
        bgr = np.ascontiguousarray(rig_views_image(self.document, panel))
        height, width = bgr.shape[:2]
        image = QImage(bgr.data, width, height, 3 * width, QImage.Format.Format_BGR888).copy()
        self.setPixmap(QPixmap.fromImage(image))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._redraw.start()


class RigCalibrationView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.current: RigCalibrationDetail | None = None
        self.title = message_label("rigCalibrationTitle")
        self.binding = message_label("rigBinding")
        self.verdict = message_label("rigVerdict")
        self.reasons = message_label("rigVerdictReasons")
        self.figures = {name: message_label(name) for name in ("rigRms", "rigWorld", "boardCheck")}
        self.cameras = _table("rigCameraTable", CAMERA_COLUMNS)
        self.pairs = _table("rigPairTable", PAIR_COLUMNS)
        self.errors = pg.PlotWidget(background="w")
        self.errors.setObjectName("rigViewErrorPlot")
        item = self.errors.getPlotItem()
        item.setLabel("left", "RMS error (px)")
        item.setLabel("bottom", "instant (view number, the same for every camera)")
        item.getAxis("left").enableAutoSIPrefix(False)
        self.legend = item.addLegend(offset=(-10, 10))
        self.errors_caption = message_label("rigErrorsCaption")
        self.picture = RigPicture("rigPicture")
        self.picture_caption = message_label(
            "rigPictureCaption",
            "Each camera a dot, its arrow where it looks; grey dots: where the board was carried "
            "(the volume the calibration saw); the cross: the world's origin.",
        )
        self.coverage_maps: list[tuple[QLabel, CoverageMap]] = []
        self.coverage_grid = QGridLayout()
        self.tabs = QTabWidget()
        self.tabs.setObjectName("rigCalibrationTabs")
        self._lay_out()
        self.show_message("Select a rig calibration to see its verdict, cameras and coverage.")

    def _lay_out(self) -> None:
        form = QFormLayout()
        form.addRow("RMS", self.figures["rigRms"])
        form.addRow("World", self.figures["rigWorld"])
        form.addRow("Board check", self.figures["boardCheck"])
        errors = QWidget()
        errors_layout = QVBoxLayout(errors)
        errors_layout.addWidget(self.errors, 1)
        errors_layout.addWidget(self.errors_caption)
        coverage = QWidget()
        coverage_layout = QVBoxLayout(coverage)
        coverage_layout.addLayout(self.coverage_grid, 1)
        coverage_layout.addWidget(message_label("rigCoverageCaption", self._coverage_caption()))
        picture = QWidget()
        picture_layout = QVBoxLayout(picture)
        picture_layout.addWidget(self.picture, 1)
        picture_layout.addWidget(self.picture_caption)
        self.tabs.addTab(self.cameras, "Cameras")
        self.tabs.addTab(picture, "Where they stand")
        self.tabs.addTab(coverage, "Coverage")
        self.tabs.addTab(errors, "View errors")
        self.tabs.addTab(self.pairs, "Pairs")
        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        for widget in (self.binding, self.verdict, self.reasons):
            body.addWidget(widget)
        body.addLayout(form)
        body.addWidget(self.tabs, 1)
        self.placeholder = title_over_body(self, self.title, self.body)

    @staticmethod
    def _coverage_caption() -> str:
        return COVERAGE_CAPTION.format(red=REJECTED).replace(
            "Corners of the used views", "Corners of the views each camera's pose solve used"
        )

    def show_message(self, text: str) -> None:
        self.current = None
        self.title.setText(text)
        for label in (self.binding, self.verdict, self.reasons, *self.figures.values()):
            label.clear()
        self.body.hide()
        self.placeholder.show()

    def show_calibration(self, detail: RigCalibrationDetail) -> None:
        s, doc = detail.summary, detail.document
        board = doc["board"]
        self.title.setText(
            f"<h3>Rig calibration {s.calibration_id[:12]}… of rig {s.rig_name}</h3>"
            f"{board['kind']} board, {len(doc['cameras'])} cameras, {doc['instants']} instants"
        )
        self.binding.setText(self._binding_words(detail))
        word, meaning, colour = VERDICTS[s.validity]
        if s.validity.value == "in use":
            meaning = f"in use: recordings of rig {s.rig_name} are analysed in 3-D through it"
        self.verdict.setText(f"<b style='color:{colour}'>{word}</b> — {meaning}")
        self.reasons.setText(
            "\n".join(f"• {r.get('message', '')} ({r.get('code', '')})" for r in detail.reasons)
        )
        self.reasons.setVisible(bool(detail.reasons))
        self._show_figures(doc)
        _fill(self.cameras, *self._camera_rows(doc))
        _fill(self.pairs, self._pair_rows(doc))
        self._show_errors(doc)
        self._show_coverage(doc)
        self.picture.show_document(doc)
        self.placeholder.hide()
        self.body.show()
        self.current = detail

    @staticmethod
    def _binding_words(detail: RigCalibrationDetail) -> str:
        s = detail.summary
        age = s.age(utcnow())
        made = (
            f"calibrated {s.created_at.astimezone():%Y-%m-%d %H:%M} "
            f"({age if age == 'just now' else age + ' ago'})"
        )
        cameras = ", ".join(
            f"{b['place']} = {b['device_id']} in {b['mode']}" for b in detail.binding
        )
        if s.valid_until is None:
            return f"Made for rig {s.rig_name} ({cameras}), {made}; not valid, so never used."
        return (
            f"Bound to rig {s.rig_name}'s cameras ({cameras}), {made}; valid until "
            f"{s.valid_until.astimezone():%Y-%m-%d %H:%M}."
        )

    def _show_figures(self, doc: dict[str, Any]) -> None:
        t = doc["thresholds"]
        self.figures["rigRms"].setText(
            f"{doc['rms_px']:.3f} px over every camera (each camera under {t['max_rms_px']:g} px)"
        )
        first = doc["cameras"][0]["name"]
        self.figures["rigWorld"].setText(
            f"the floor board, seen by {', '.join(doc['floor_cameras'])}: z up, the floor at z = 0"
            if doc["world"] == "floor"
            else f"camera {first}: x right, y down, z ahead (no floor recording)"
        )
        length = doc["board_length"]
        self.figures["boardCheck"].setText(
            f"diagonal {length['mean_mm']:.2f} mm measured vs {length['nominal_mm']:.2f} mm "
            f"nominal over {length['samples']} instants: error RMS "
            f"{length['rms_error_mm']:.2f} mm, max {length['max_error_mm']:.2f} mm "
            f"({t['max_board_length_rms_mm']:g} mm allowed)"
            if length["samples"]
            else "not made: no instant had the board's corners seen by two cameras"
        )

    @staticmethod
    def _camera_rows(doc: dict[str, Any]) -> tuple[list[tuple[str, ...]], list[dict[int, str]]]:
        """Each camera's figures, and the tooltip of its Shared cell: the views it shares with
        each other camera."""
        shared: dict[tuple[str, str], int] = {}
        for p in doc["pairs"]:
            a, b = p["cameras"]
            shared[(a, b)] = shared[(b, a)] = int(p["shared_views"])
        rows: list[tuple[str, ...]] = []
        tips: list[dict[int, str]] = []
        shared_at = CAMERA_COLUMNS.index("Shared")
        for cam in doc["cameras"]:
            name = cam["name"]
            others = [(c["name"], shared.get((name, c["name"]), 0)) for c in doc["cameras"]]
            others = [(o, n) for o, n in others if o != name]
            rows.append(
                (
                    name,
                    f"{cam['rms_px']:.3f}",
                    f"{cam['intrinsics_rms_px']:.3f}",
                    f"{len(cam['views'])} of {len(cam['detected'])}",
                    str(len(cam["rejected"])),
                    f"{cam['coverage']:.0%}",
                    str(sum(n for _, n in others)),
                )
            )
            tips.append(
                {
                    shared_at: f"views camera {name} shares with: "
                    + ", ".join(f"{o} {n}" for o, n in others)
                }
            )
        return rows, tips

    @staticmethod
    def _pair_rows(doc: dict[str, Any]) -> list[tuple[str, ...]]:
        return [
            (
                f"{p['cameras'][0]} – {p['cameras'][1]}",
                f"{p['distance_mm']:.1f}",
                f"{p['angle_deg']:.1f}",
                str(p["shared_views"]),
            )
            for p in doc["pairs"]
        ]

    def _show_errors(self, doc: dict[str, Any]) -> None:
        item = self.errors.getPlotItem()
        item.clear()
        self.legend.clear()
        dropped = 0
        for n, cam in enumerate(doc["cameras"]):
            colour = COLOURS[n % len(COLOURS)]
            used = cam["views"]
            item.addItem(
                pg.ScatterPlotItem(
                    [v["instant"] for v in used],
                    [v["error_px"] for v in used],
                    size=7,
                    pen=None,
                    brush=pg.mkBrush(colour),
                    name=cam["name"],
                )
            )
            rejected = cam["rejected"]
            dropped += len(rejected)
            if rejected:
                item.addItem(
                    pg.ScatterPlotItem(
                        [v["instant"] for v in rejected],
                        [v["error_px"] for v in rejected],
                        size=11,
                        symbol="x",
                        pen=pg.mkPen(colour, width=2),
                        brush=pg.mkBrush(colour),
                    )
                )
        self.errors_caption.setText(
            "Each dot one camera's view at one instant, in the camera's colour; a cross: a view "
            f"dropped, its error far above that camera's others ({dropped} dropped in all). The "
            "solve ran again without them."
        )

    def _show_coverage(self, doc: dict[str, Any]) -> None:
        cameras = doc["cameras"]
        while len(self.coverage_maps) < len(cameras):
            label, plot = QLabel(), CoverageMap()
            at = len(self.coverage_maps)
            cell = QVBoxLayout()
            cell.addWidget(label)
            cell.addWidget(plot, 1)
            self.coverage_grid.addLayout(cell, at // COVERAGE_COLUMNS, at % COVERAGE_COLUMNS)
            self.coverage_maps.append((label, plot))
        for n, (label, plot) in enumerate(self.coverage_maps):
            shown = n < len(cameras)
            label.setVisible(shown)
            plot.setVisible(shown)
            if not shown:
                continue
            cam = cameras[n]
            counts = np.asarray(cam["coverage_counts"], dtype=np.int64)
            size = (int(cam["image_size"][0]), int(cam["image_size"][1]))
            plot.show_coverage(counts, size, np.zeros((0, 2)))
            label.setText(
                f"<b style='color:{COLOURS[n % len(COLOURS)]}'>{cam['name']}</b>: "
                f"{cam['coverage']:.0%} of the picture"
            )
