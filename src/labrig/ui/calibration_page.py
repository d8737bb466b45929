"""The Calibration page: stored calibrations with binding, age and verdict; one in detail; calibrating anew.

Threading contract: GUI thread only. Reads run on a pool thread when the page is first shown and again when the
:class:`~labrig.ui.bridge.EventBridge` reports ``calibration.validated`` or ``capture.committed`` (a hidden page
notes it is stale and reads when next shown). The frame of the view picked in the detail is decoded on a pool
thread too, newest pick wins. A calibration runs on a thread of its own, so reads never wait behind a solve; the
form is disabled until it ends.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QItemSelection, Qt, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from labrig.bootstrap import Services
from labrig.calibration import (
    CalibrationDetail,
    CalibrationOutcome,
    CalibrationSummary,
    CaptureChoice,
    calibrate_from_capture,
    committed_captures,
    list_calibrations,
    load_boards,
    load_calibration_detail,
    load_view_frame,
)
from labrig.domain.events import EventName
from labrig.events import EventRecord
from labrig.ui.background import BackgroundCalls, say_error
from labrig.ui.bridge import EventBridge
from labrig.ui.calibrate_form import CalibrateForm
from labrig.ui.calibration_view import CalibrationView
from labrig.ui.calibrations_model import CalibrationTableModel
from labrig.ui.latest import Latest
from labrig.ui.rows_model import rows_table, select_key, selected_key

LIST_WIDTH = 560  # px: device, mode, age, RMS and verdict fit without scrolling


class CalibrationPage(QWidget):
    def __init__(self, services: Services, bridge: EventBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._store = services.store
        self._reads = BackgroundCalls(threads=2, parent=self)
        self._solves = BackgroundCalls(threads=1, parent=self)
        self._list_reads, self._detail_reads, self._capture_reads, self._frame_reads = (
            Latest(self._reads) for _ in range(4))
        self._stale = True
        self._select_next: str | None = None  # a calibration just made: selected once the list shows it
        self.model = CalibrationTableModel(self)
        self.table = rows_table(self.model, "calibrationTable")
        self.list_status = QLabel("")
        self.list_status.setObjectName("listStatus")
        self.list_status.setWordWrap(True)
        self.form = CalibrateForm(list(load_boards()))  # in the file's order: the lab lists its own board first
        self.detail = CalibrationView()
        self._lay_out()
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self.form.button.clicked.connect(self._on_form_button_clicked)
        self.detail.viewPicked.connect(self._on_detail_view_picked)
        bridge.eventRecorded.connect(self._on_bridge_event_recorded)

    def _lay_out(self) -> None:
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.table, 1)
        column.addWidget(self.list_status)
        column.addWidget(self.form)
        split = QSplitter(Qt.Orientation.Horizontal)
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
        self._stale = False
        self._list_reads.request(partial(list_calibrations, self._store), self._on_calibrations_read,
                                 self._on_list_failed)
        self._capture_reads.request(partial(committed_captures, self._store), self._on_captures_read,
                                    self._on_list_failed)

    def shut_down(self, timeout_ms: int) -> None:
        """Wait for reads and a running calibration, so none outlives the store."""
        self._solves.wait(timeout_ms)
        self._reads.wait(timeout_ms)

    def selected_calibration_id(self) -> str | None:
        return selected_key(self.table, self.model)

    def select_calibration(self, calibration_id: str) -> bool:
        return select_key(self.table, self.model, calibration_id)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    @Slot(object)
    def _on_bridge_event_recorded(self, event: EventRecord) -> None:
        if event.name not in (EventName.CALIBRATION_VALIDATED, EventName.CAPTURE_COMMITTED):
            return
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def _on_calibrations_read(self, calibrations: list[CalibrationSummary]) -> None:
        selected = self._select_next or self.selected_calibration_id()
        before = self.model.find(selected) if selected else None
        selection = self.table.selectionModel()
        selection.blockSignals(True)  # a re-read is not a new choice: the detail is read again only if it changed
        try:
            self.model.set_rows(calibrations)
            listed = selected is not None and self.select_calibration(selected)
        finally:
            selection.blockSignals(False)
        self.table.viewport().update()
        self.list_status.setText(f"{len(calibrations)} stored, newest first." if calibrations
                                 else "No calibrations yet: calibrate a device from a recording of the board below.")
        just_made, self._select_next = selected == self._select_next, None
        if selected is not None and listed and (just_made or self.model.find(selected) != before):
            self._read_detail(selected)

    def _on_captures_read(self, captures: list[CaptureChoice]) -> None:
        self.form.set_captures(captures)

    def _on_list_failed(self, error: Exception) -> None:
        self.list_status.setText(f"The calibrations could not be read: {say_error(error)}")

    @Slot(QItemSelection, QItemSelection)
    def _on_table_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        calibration_id = self.selected_calibration_id()
        if calibration_id is None:
            self.detail.show_message("Select a calibration to see its verdict and errors.")
            return
        self.detail.show_message("Reading the calibration…")
        self._read_detail(calibration_id)

    def _read_detail(self, calibration_id: str) -> None:
        self._detail_reads.request(partial(load_calibration_detail, self._store, calibration_id),
                                   self._on_detail_read, self._on_detail_failed)

    def _on_detail_read(self, detail: CalibrationDetail) -> None:
        if detail.summary.calibration_id == self.selected_calibration_id():
            self.detail.show_calibration(detail)

    def _on_detail_failed(self, error: Exception) -> None:
        self.detail.show_message(f"The calibration could not be read: {say_error(error)}")

    @Slot(str)
    def _on_detail_view_picked(self, view_name: str) -> None:
        detail = self.detail.current
        if detail is None:
            return
        calibration_id = detail.summary.calibration_id
        self._frame_reads.request(partial(load_view_frame, self._store, detail, view_name),
                                  partial(self.detail.show_frame, calibration_id, view_name),
                                  lambda error: self.detail.show_frame_failed(calibration_id, view_name,
                                                                              say_error(error)))

    @Slot()
    def _on_form_button_clicked(self) -> None:
        request = self.form.request()
        if request is None:
            return
        self.form.set_running(True)
        self.form.status.setText(f"Calibrating from {request.capture.describe()}…")
        work = partial(calibrate_from_capture, self._store, request.board, request.capture, request.plane,
                       request.every)
        self._solves.submit(work, self._on_calibration_done, self._on_calibration_failed)

    def _on_calibration_done(self, outcome: CalibrationOutcome) -> None:
        self.form.set_running(False)
        result = outcome.result
        verdict = "valid" if result.valid else "NOT valid (see the reasons on the right)"
        scale = "; outputs in mm through the plane view" if outcome.plane else ""
        self.form.status.setText(f"Calibration {outcome.stored.id[:12]}…: RMS {result.rms_px:.3f} px over "
                                 f"{result.view_count} views, {verdict}{scale}.")
        self._select_next = outcome.stored.id
        self.refresh()

    def _on_calibration_failed(self, error: Exception) -> None:
        self.form.set_running(False)
        self.form.status.setText(f"Not calibrated: {say_error(error)}")
