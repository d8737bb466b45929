"""One attempt's result: status and quality badges, why it is degraded or blocked, plots,
metrics, provenance.

Everything shown comes from the stored ``labrig.result/1`` document (or, before the publisher wrote
one, from the attempt's jobs). Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from labrig.capture.rig_sync import SyncFigures
from labrig.domain.jobs import JobState
from labrig.results import ResultDetail, ResultStatus
from labrig.review import RevisedValue, SignOffState
from labrig.ui.common.flag_panel import FlaggedPanel
from labrig.ui.common.flow_layout import FlowLayout
from labrig.ui.common.palette import AMBER, GREEN, GREY, RED
from labrig.ui.common.provenance_view import ProvenanceTree
from labrig.ui.common.widgets import message_label, title_over_body
from labrig.ui.shell.queue_monitor import WORDS

if TYPE_CHECKING:
    from labrig.ui.common.reconstruction_view import ReconstructionView
    from labrig.ui.common.result_plots import ResultPlots

# (document key, column caption, what its unit is)
METRIC_COLUMNS: tuple[tuple[str, str, str | None], ...] = (
    ("track_id", "Track", None),
    ("path_length", "Path length", "length"),
    ("displacement", "Displacement", "length"),
    ("peak_speed", "Peak speed", "speed"),
    ("time_to_peak_speed", "Time to peak speed", "time"),
    ("extent", "Range of motion", "length"),
    ("range_x", "Range x", "length"),
    ("range_y", "Range y", "length"),
    ("range_z", "Range z", "length"),  # a rig's 3-D result only
    ("reason", "Note", None),
)
NO_RELEASE_TIP = (
    "No release was active when this result was made: this build's built-in stages ran, so the "
    "result cannot be traced to a health-checked, activated release. An admin activates one on "
    "the Releases screen; reprocess the attempt to make the result under it."
)
STATUS_BADGES = {
    ResultStatus.PUBLISHED: ("Published", GREEN),
    ResultStatus.DEGRADED: ("Published", GREEN),
    ResultStatus.BLOCKED: ("Blocked", RED),
    ResultStatus.PENDING: ("Pending", GREY),
}


RECONSTRUCTION_TAB = "3-D reconstruction"


def format_value(value: Any) -> str:
    """A metric cell: two decimals for measures, the text itself otherwise, "—" for none."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _set_badge(badge: QLabel, text: str, colour: str, tip: str = "") -> None:
    badge.setText(text)
    badge.setToolTip(tip)
    badge.setStyleSheet(
        f"QLabel {{ background: {colour}; color: black; border-radius: 4px; padding: 2px 8px; "
        "font-weight: bold; }"
    )
    badge.show()


def _show_revised(item: QTableWidgetItem, change: RevisedValue) -> None:
    """The value in force, marked, with the automatic value beside it and who changed
    it, when and why."""
    item.setText(
        f"{format_value(change.effective)} (revised; auto {format_value(change.automatic)})"
    )
    item.setToolTip(
        f"Revised: {change.describe()}\nAutomatic value {format_value(change.automatic)}, kept "
        "unchanged."
    )
    item.setBackground(QBrush(QColor(AMBER)))
    item.setForeground(QBrush(QColor("black")))


def _bullets(lines: Sequence[str]) -> str:
    return "\n".join(f"• {line}" for line in lines)


class ResultView(QWidget):
    """The detail half of the Results page; :meth:`show_result` fills it,
    :meth:`show_message` empties it.

    The plots and the 3-D reconstruction (pyqtgraph's, a fifth of a second to import) are made
    when a result is first shown, so the window paints its list before them."""

    #: A click on the speed plot: the time clicked, s.
    plotClicked = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = message_label("resultTitle")
        self.badges = {
            name: message_label(name, wrap=False)
            for name in (
                "statusBadge",
                "degradedBadge",
                "unitsBadge",
                "calibrationBadge",
                "releaseBadge",
                "qcBadge",
                "syncBadge",
                "revisedBadge",
                "signOffBadge",
            )
        }
        self.degraded_reasons = message_label("degradedReasons")
        self.blocked_panel = QFrame()
        self.blocked_panel.setObjectName("blockedPanel")
        self.blocked_panel.setStyleSheet(
            "#blockedPanel { border: 2px solid #c03030; border-radius: 4px; }"
        )
        self.blocked_reasons = message_label("blockedReasons")
        self.what_to_do = message_label("whatToDo")
        self.pending = message_label("pendingStages")
        self.previous_note = message_label("previousNote")
        self.attempt_note = message_label("attemptNote")  # e.g. its recording was interrupted
        # made under a calibration that changed since: why, and reprocessing it in one action
        self.flagged_panel = FlaggedPanel()
        self.reprocess_button = self.flagged_panel.reprocess_button
        self.reprocess_message = self.flagged_panel.message
        self._plots: ResultPlots | None = None
        self._reconstruction: ReconstructionView | None = None
        # where they go once made
        self._plots_slot, self._reconstruction_slot = QWidget(), QWidget()
        self.metrics = self._build_metrics()
        self.provenance = ProvenanceTree()
        self.current: ResultDetail | None = None  # what is shown
        self._lay_out()
        self.show_message("Select an attempt to see its result.")

    def _build_metrics(self) -> QTableWidget:
        table = QTableWidget(0, len(METRIC_COLUMNS))
        table.setObjectName("metricsTable")
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.verticalHeader().hide()
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        table.horizontalHeader().setStretchLastSection(True)
        return table

    def _lay_out(self) -> None:
        # the badges wrap onto a second row rather than widen the panel (and squeeze the list)
        self.badge_row = QWidget()
        self.badge_row.setObjectName("badgeRow")
        badges = FlowLayout(self.badge_row)
        for badge in self.badges.values():
            badges.addWidget(badge)
        blocked = QVBoxLayout(self.blocked_panel)
        blocked.addWidget(QLabel("<b>Publication is blocked</b>"))
        blocked.addWidget(self.blocked_reasons)
        blocked.addWidget(QLabel("<b>What to do</b>"))
        blocked.addWidget(self.what_to_do)
        self.tabs = tabs = QTabWidget()
        tabs.setObjectName("resultTabs")
        tabs.addTab(self.metrics, "Metrics")
        tabs.addTab(self._reconstruction_slot, RECONSTRUCTION_TAB)
        tabs.addTab(self.provenance, "Provenance")
        self._split = split = QSplitter(Qt.Orientation.Vertical)
        split.setObjectName("resultPlotsSplitter")  # positions kept between runs by name
        split.addWidget(self._plots_slot)
        split.addWidget(tabs)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.body = QWidget()  # everything but the title: hidden while no result is shown
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.badge_row)
        for widget in (
            self.attempt_note,
            self.flagged_panel,
            self.degraded_reasons,
            self.blocked_panel,
            self.pending,
            self.previous_note,
        ):
            body.addWidget(widget)
        body.addWidget(split, 1)
        self.placeholder = title_over_body(self, self.title, self.body)

    @property
    def plots(self) -> ResultPlots:
        """The trajectory and speed plots (made at first use)."""
        if self._plots is None:
            from labrig.ui.common.result_plots import ResultPlots

            self._plots = ResultPlots()
            self._plots.setVisible(self._plots_slot.isVisibleTo(self))
            self._plots.time_cursor.clicked.connect(self.plotClicked)
            self._split.replaceWidget(self._split.indexOf(self._plots_slot), self._plots)
        return self._plots

    @property
    def reconstruction(self) -> ReconstructionView:
        """The 3-D reconstruction's tab (made at first use)."""
        if self._reconstruction is None:
            from labrig.ui.common.reconstruction_view import ReconstructionView

            self._reconstruction = ReconstructionView()
            at = self.tabs.indexOf(self._reconstruction_slot)
            visible = self.tabs.isTabVisible(at)
            self.tabs.removeTab(at)
            self.tabs.insertTab(at, self._reconstruction, RECONSTRUCTION_TAB)
            self.tabs.setTabVisible(at, visible)
        return self._reconstruction

    def _reconstruction_tab(self) -> int:
        return self.tabs.indexOf(self._reconstruction or self._reconstruction_slot)

    def show_message(self, text: str) -> None:
        """No result shown: ``text`` says why (nothing selected, loading, a read failed)."""
        self.current = None
        self.title.setText(text)
        for widget in (
            *self.badges.values(),
            self.degraded_reasons,
            self.blocked_panel,
            self.pending,
            self.previous_note,
            self.attempt_note,
            self.flagged_panel,
        ):
            widget.hide()
        if self._plots is not None:
            self._plots.clear()
        self.metrics.setRowCount(0)
        if self._reconstruction is not None:
            self._reconstruction.clear()
        self.provenance.clear()
        self.body.hide()
        self.placeholder.show()

    def show_result(
        self,
        detail: ResultDetail,
        revised: Mapping[str, RevisedValue] | None = None,
        sign_off: SignOffState | None = None,
    ) -> None:
        """``revised``: the values reviewers changed (by ``track:ID.metric``), shown beside
        the automatic ones; ``sign_off``: the result's latest sign-off, in force or cleared."""
        self.show_message("")
        self.placeholder.hide()
        self.body.show()
        # a blocked result has nothing to plot: its provenance gets the room
        self.plots.setVisible(bool(detail.tracks))
        s = detail.summary
        self.title.setText(f"<h3>{s.subject_code} · {s.protocol} · attempt {s.number}</h3>")
        self.title.setToolTip(s.note or "")
        if s.note:
            self.attempt_note.setText(s.note)
            self.attempt_note.show()
        _set_badge(self.badges["statusBadge"], *STATUS_BADGES[s.status])
        if s.flags:
            self.flagged_panel.show_flags(s.flags, detail.reanalysed_as)
        self._show_reasons(detail)
        self._show_quality(detail)
        self.plots.show_tracks(detail.tracks, detail.units)
        self._show_metrics(detail.metrics, detail.units, revised or {})
        if sign_off is not None:
            _set_badge(
                self.badges["signOffBadge"],
                sign_off.meaning.upper() if sign_off.in_force else "SIGN-OFF CLEARED",
                GREEN if sign_off.in_force else AMBER,
                sign_off.describe(),
            )
        three_d = detail.reconstruction is not None
        self.tabs.setTabVisible(self._reconstruction_tab(), three_d)
        if detail.reconstruction is not None:
            self.reconstruction.show_reconstruction(
                detail.reconstruction, detail.tracks, (detail.units or ("", "s"))[1]
            )
        self.provenance.show_detail(detail)
        self.current = detail

    def _show_reasons(self, detail: ResultDetail) -> None:
        status, reasons = detail.summary.status, detail.summary.reasons
        if status is ResultStatus.DEGRADED:
            _set_badge(
                self.badges["degradedBadge"],
                "DEGRADED",
                AMBER,
                "Published with limitations: see why below",
            )
            self.degraded_reasons.setText("Degraded because:\n" + _bullets(reasons))
            self.degraded_reasons.show()
        if status is ResultStatus.BLOCKED:
            self.blocked_reasons.setText(_bullets(reasons))
            self.what_to_do.setText(_bullets(detail.advice))
            self.blocked_panel.show()
        if status is ResultStatus.PENDING:
            words = [
                f"{st.stage_id}: {WORDS.get(JobState(st.state), st.state)}" for st in detail.stages
            ]
            self.pending.setText(
                "Analysis in progress: " + (" · ".join(words) or "no stages requested")
            )
            self.pending.show()
        if detail.previous and detail.document is not None:
            self.previous_note.setText(
                "A reprocess is running; the plots and metrics below are the previous result."
            )
            self.previous_note.show()

    def _show_quality(self, detail: ResultDetail) -> None:
        doc = detail.document
        if doc is None:
            return
        three_d = detail.reconstruction is not None
        if detail.units is not None:
            length, time = detail.units
            metric = (length, time) == ("mm", "s")
            _set_badge(
                self.badges["unitsBadge"],
                f"3-D · {length} · {time}" if three_d else f"{length} · {time}",
                GREEN if metric else AMBER,
                "calibrated rig: millimetres in the rig's world (z up), seconds"
                if three_d
                else "calibrated: millimetres on the measurement plane, seconds"
                if metric
                else _units_words(length, time),
            )
        provenance = doc.get("provenance") or {}
        if "rig_calibration_id" in provenance:
            rig = provenance.get("rig_calibration_id")
            _set_badge(
                self.badges["calibrationBadge"],
                f"Rig calibration {rig[:8]}" if rig else "No rig calibration",
                GREEN if rig else RED,
                rig or "no valid rig calibration: no 3-D",
            )
        else:
            calibration = provenance.get("calibration_id")
            _set_badge(
                self.badges["calibrationBadge"],
                f"Calibration {calibration[:8]}" if calibration else "No calibration",
                GREEN if calibration else AMBER,
                calibration or "",
            )
        release = (doc.get("provenance") or {}).get("release")
        _set_badge(
            self.badges["releaseBadge"],
            f"Release {release['version']}" if release else "No active release",
            GREEN if release else AMBER,
            release["digest"] if release else NO_RELEASE_TIP,
        )
        if sync := doc.get("sync"):
            figures = SyncFigures.from_json(sync)
            spread = figures.spread_ms
            sound = (
                spread is not None
                and spread["p99"] <= figures.frame_interval_ms / 4
                and not any(figures.unmatched.values())
            )
            devices = f"{len(figures.cameras)} cameras" + (
                f" + {len(figures.instruments)} instrument{'s' * (len(figures.instruments) > 1)}"
                if figures.instruments
                else ""
            )
            _set_badge(
                self.badges["syncBadge"],
                f"{devices} · sync p99 {spread['p99']:.2f} ms"
                if spread
                else f"{devices} · not in sync",
                GREEN if sound else AMBER,
                figures.summary(),
            )
        qc = doc.get("qc") or {}
        if qc.get("decoded_frames") is not None:
            decoded, expected, gaps = (
                qc["decoded_frames"],
                qc.get("expected_frames"),
                qc.get("gaps") or 0,
            )
            sound = (expected in (None, decoded)) and gaps == 0
            frames = f"{decoded} of {expected}" if expected is not None else f"{decoded}"
            _set_badge(
                self.badges["qcBadge"],
                f"{frames} frames · {gaps} gaps",
                GREEN if sound else AMBER,
                _bullets(
                    qc.get("problems")
                    or ["the recording decoded completely, with no timestamp gaps"]
                ),
            )

    def _show_metrics(
        self,
        metrics: Sequence[Mapping[str, Any]],
        units: tuple[str, str] | None,
        revised: Mapping[str, RevisedValue],
    ) -> None:
        length, time = units or ("", "")
        unit = {
            "length": length,
            "time": time,
            "speed": f"{length}/{'frame' if time == 'frames' else time}",
        }
        self.metrics.setHorizontalHeaderLabels(
            [
                f"{caption} ({unit[kind]})" if kind and units else caption
                for _, caption, kind in METRIC_COLUMNS
            ]
        )
        self.metrics.setRowCount(len(metrics))
        keys = [key for key, _, _ in METRIC_COLUMNS]
        self.metrics.setColumnHidden(
            keys.index("range_z"), not any("range_z" in m for m in metrics)
        )
        for row, metric in enumerate(metrics):
            for column, (key, _, _) in enumerate(METRIC_COLUMNS):
                item = QTableWidgetItem(format_value(metric.get(key)))
                if key != "reason":
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                change = revised.get(f"track:{metric.get('track_id')}.{key}")
                if change is not None:
                    _show_revised(item, change)
                self.metrics.setItem(row, column, item)
        if revised:
            count = f"{len(revised)} value" + ("s" if len(revised) != 1 else "")
            _set_badge(
                self.badges["revisedBadge"],
                f"REVISED: {count}",
                AMBER,
                "A reviewer changed these values on the Review page; the automatic values are kept "
                "and shown beside them.",
            )


def _units_words(length: str, time: str) -> str:
    """The units badge's tooltip for a result not in mm and s."""
    where = "no valid calibration: pixels" if length == "px" else f"lengths in {length}"
    when = "seconds" if time == "s" else "frame numbers (the recording has no timestamps)"
    return f"{where}, {when}"
