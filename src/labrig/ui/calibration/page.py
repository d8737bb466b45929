"""The Calibration page: stored calibrations with binding, age and verdict; one in detail;
calibrating anew.

Threading contract: GUI thread only. Reads run on a pool thread when the page is first shown and
again when the :class:`~labrig.ui.shell.bridge.EventBridge` reports ``calibration.validated`` or
``capture.committed`` (a hidden page notes it is stale and reads when next shown). The frame of the
view picked in the detail is decoded on a pool thread too, newest pick wins. A calibration runs on a
thread of its own, so reads never wait behind a solve; the form is disabled until it ends, while a
bar shows its progress and a Cancel button stops it.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from labrig.calibration import (
    CalibrationDetail,
    CalibrationOutcome,
    CalibrationService,
    CalibrationSummary,
    CaptureChoice,
)
from labrig.domain.events import EventName
from labrig.events import EventRecord
from labrig.ui.calibration.form import CalibrateForm
from labrig.ui.calibration.model import CalibrationTableModel
from labrig.ui.calibration.view import CalibrationView
from labrig.ui.common.list_detail import ListDetailPage
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.latest import Latest

LIST_WIDTH = 560  # px: device, mode, age, RMS and verdict fit without scrolling
REFRESHING = frozenset({EventName.CALIBRATION_VALIDATED, EventName.CAPTURE_COMMITTED})


class CalibrationPage(ListDetailPage[CalibrationSummary, CalibrationDetail]):
    """Stored calibrations on the left with the form below them; the selected one in
    detail on the right."""

    nothing_selected_text = "Select a calibration to see its verdict and errors."
    reading_text = "Reading the calibration…"
    list_noun, detail_noun = "calibrations", "calibration"

    def __init__(
        self, calibration: CalibrationService, bridge: EventBridge, parent: QWidget | None = None
    ) -> None:
        super().__init__(bridge, CalibrationTableModel(), "calibrationTable", parent=parent)
        self._calibration = calibration
        self._solves = BackgroundCalls(threads=1, parent=self)
        self._capture_reads, self._frame_reads = Latest(self._reads), Latest(self._reads)
        # in the file's order: the lab's own board first
        self.form = CalibrateForm(list(calibration.boards()))
        self.detail = CalibrationView()
        self._lay_out()
        self.form.button.clicked.connect(self._on_form_button_clicked)
        self.detail.viewPicked.connect(self._on_detail_view_picked)

    def _lay_out(self) -> None:
        left = self.list_column(self.form)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("calibrationSplitter")  # positions kept between runs by name
        split.addWidget(left)
        split.addWidget(self.detail)
        split.setStretchFactor(1, 2)
        split.setSizes([LIST_WIDTH, 2 * LIST_WIDTH])
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<h2>Calibration</h2>"))
        layout.addWidget(split, 1)

    @property
    def busy(self) -> bool:
        """A read or a calibration is running or queued."""
        return self._reads.busy or self._solves.busy

    def refresh(self) -> None:
        """Read the calibrations and the recordings on offer again (off the GUI thread)."""
        super().refresh()
        self._capture_reads.request(
            self._calibration.recordings, self._on_captures_read, self._on_list_failed
        )

    def shut_down(self, timeout_ms: int) -> None:
        """Wait for a running calibration and for reads, so none outlives the store."""
        self._solves.wait(timeout_ms)
        super().shut_down(timeout_ms)

    # -- the list and the detail -------------------------------------------------------------------

    def read_list(self) -> list[CalibrationSummary]:
        return self._calibration.calibrations()

    def read_detail(self, key: str) -> CalibrationDetail:
        return self._calibration.detail(key)

    def detail_key(self, detail: CalibrationDetail) -> str:
        return detail.summary.calibration_id

    def show_detail(self, detail: CalibrationDetail) -> None:
        self.detail.show_calibration(detail)

    def show_placeholder(self, text: str) -> None:
        self.detail.show_message(text)

    def describe_list(self, rows: list[CalibrationSummary]) -> str:
        return (
            f"{len(rows)} stored, newest first."
            if rows
            else "No calibrations yet: calibrate a device from a recording of the board below."
        )

    def refreshes(self, event: EventRecord) -> bool:
        return event.name in REFRESHING

    def _on_captures_read(self, captures: list[CaptureChoice]) -> None:
        self.form.set_captures(captures)

    @Slot(str)
    def _on_detail_view_picked(self, view_name: str) -> None:
        detail = self.detail.current
        if detail is None:
            return
        calibration_id = detail.summary.calibration_id
        self._frame_reads.request(
            partial(self._calibration.view_frame, detail, view_name),
            partial(self.detail.show_frame, calibration_id, view_name),
            lambda error: self.detail.show_frame_failed(
                calibration_id, view_name, say_error(error)
            ),
        )

    # -- calibrating -------------------------------------------------------------------------------

    @Slot()
    def _on_form_button_clicked(self) -> None:
        request = self.form.request()
        if request is None:
            return
        self.form.set_running(True)
        self.form.status.clear()
        task = self.form.progress.begin(f"Calibrating from {request.capture.describe()}")
        work = partial(
            self._calibration.calibrate,
            request.board,
            request.capture,
            request.plane,
            request.every,
            task,
        )
        self._solves.submit(work, self._on_calibration_done, self._on_calibration_failed)

    def _on_calibration_done(self, outcome: CalibrationOutcome) -> None:
        self.form.progress.end()
        self.form.set_running(False)
        result = outcome.result
        verdict = "valid" if result.valid else "NOT valid (see the reasons on the right)"
        scale = "; outputs in mm through the plane view" if outcome.plane else ""
        self.form.status.setText(
            f"Calibration {outcome.stored.id[:12]}…: RMS {result.rms_px:.3f} px over "
            f"{result.view_count} views, {verdict}{scale}."
        )
        self.select_when_listed(outcome.stored.id)
        self.refresh()

    def _on_calibration_failed(self, error: Exception) -> None:
        self.form.progress.end()
        self.form.set_running(False)
        self.form.status.setText(f"Not calibrated: {say_error(error)}")
