"""The Calibration page on real stored calibrations, and calibrating from a real board recording."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from labrig.analysis.calibration import CalibrationThresholds
from labrig.analysis.calibration_views import Validity
from labrig.bootstrap import Services
from labrig.capture.sources import Mode
from labrig.ui.bridge import EventBridge
from labrig.ui.calibration_page import CalibrationPage
from labrig.ui.calibration_view import REJECTED, USED
from labrig.ui.calibrations_model import VERDICT_COLUMN
from tests.support.analysis_runs import MARKERS, calibrate_markers_camera, record_board
from tests.ui.analysis_helpers import WAIT_MS, click_row

SMALL = Mode(640, 360, 30.0)  # quick to render and detect


@pytest.fixture
def bridge(services: Services) -> Iterator[EventBridge]:
    bridge = EventBridge()
    bridge.attach(services)
    yield bridge
    bridge.detach(services)


@pytest.fixture
def page(qtbot: QtBot, services: Services, bridge: EventBridge) -> Iterator[CalibrationPage]:
    page = CalibrationPage(services, bridge)
    qtbot.addWidget(page)
    page.resize(1500, 950)
    yield page
    page.shut_down(10_000)


def _show(qtbot: QtBot, page: CalibrationPage) -> None:
    page.show()
    qtbot.waitExposed(page)
    qtbot.waitUntil(lambda: not page.busy, timeout=WAIT_MS)


def _open(qtbot: QtBot, page: CalibrationPage, calibration_id: str) -> None:
    row = page.model.row_of(calibration_id)
    assert row is not None, "the calibration is not listed"
    click_row(qtbot, page.table, row)
    qtbot.waitUntil(lambda: page.detail.current is not None
                    and page.detail.current.summary.calibration_id == calibration_id, timeout=WAIT_MS)


def _verdict_shown(page: CalibrationPage, calibration_id: str) -> str:
    return str(page.model.index(page.model.row_of(calibration_id) or 0, VERDICT_COLUMN).data())


def test_stored_calibrations_show_binding_verdict_and_per_view_errors_with_rejected_views_marked(
        qtbot: QtBot, services: Services, page: CalibrationPage) -> None:
    good = calibrate_markers_camera(services, SMALL, reject_one=True)
    strict = CalibrationThresholds(max_rms_px=0.01)
    bad = calibrate_markers_camera(services, SMALL, thresholds=strict, plane=False)
    assert good.valid and not bad.valid
    _show(qtbot, page)
    assert page.model.rowCount() == 2
    assert _verdict_shown(page, good.id) == "Valid, in use"
    assert _verdict_shown(page, bad.id) == "Not valid"
    assert page.model.index(0, 0).data() == MARKERS.device_id
    assert page.model.index(0, 1).data() == SMALL.label()
    assert page.model.index(0, 2).data() == "just now"

    _open(qtbot, page, good.id)

    detail = page.detail.current
    assert detail is not None and detail.summary.validity is Validity.IN_USE
    views = detail.document["views"] + detail.document["rejected"]
    assert len(detail.document["rejected"]) == 1
    bars = page.detail.bars
    assert bars is not None and len(bars.opts["height"]) == len(views) == len(detail.views)
    colours = [brush.color().name() for brush in bars.opts["brushes"]]
    rejected_at = [i for i, v in enumerate(detail.views) if v.rejected]
    assert [i for i, c in enumerate(colours) if c == REJECTED] == rejected_at == [3]
    assert colours.count(USED) == len(views) - 1
    assert bars.opts["height"][3] == pytest.approx(detail.document["rejected"][0]["error_px"])
    assert page.detail.verdict.text().count("VALID") == 1 and "in use" in page.detail.verdict.text()
    assert not page.detail.reasons.isVisible()
    assert f"Bound to {MARKERS.device_id} in {SMALL.label()}" in page.detail.binding.text()
    assert "mm" in page.detail.figures["scale"].text()
    assert page.detail.coverage.value() == round(detail.document["coverage"] * 100)
    assert "no coverage map" in page.detail.coverage_note.text()

    _open(qtbot, page, bad.id)

    assert "NOT VALID" in page.detail.verdict.text()
    assert page.detail.reasons.isVisible()
    assert "LABRIG_RMS_TOO_HIGH" in page.detail.reasons.text()
    assert "not bound: it did not validate" in page.detail.binding.text()
    assert page.detail.bars is not None
    assert all(b.color().name() == USED for b in page.detail.bars.opts["brushes"])


def test_calibrating_from_a_board_recording_runs_off_the_gui_thread_and_shows_its_verdict(
        qtbot: QtBot, services: Services, page: CalibrationPage) -> None:
    board = record_board(services, SMALL)
    plane = record_board(services, SMALL, scene="plane", frames=2)
    _show(qtbot, page)
    assert page.model.rowCount() == 0
    form = page.form
    assert form.capture.count() == 2 and form.plane.count() == 3  # the plane list starts with "none"
    form.capture.setCurrentIndex(next(i for i in range(2) if form.capture.itemData(i).capture_id == board))
    form.plane.setCurrentIndex(next(i for i in range(1, 3) if form.plane.itemData(i).capture_id == plane))
    form.board.setCurrentText("virtual-9x6-25")
    form.every.setValue(1)

    qtbot.mouseClick(form.button, Qt.MouseButton.LeftButton)

    assert not form.button.isEnabled() and form.button.text() == "Calibrating…"  # the solve runs elsewhere
    qtbot.waitUntil(lambda: page.detail.current is not None, timeout=WAIT_MS)
    detail = page.detail.current
    assert detail is not None and detail.summary.validity is Validity.IN_USE
    assert detail.summary.has_plane and detail.summary.mode == SMALL.label()
    assert form.button.isEnabled()
    assert ", valid; outputs in mm through the plane view." in form.status.text()
    assert page.model.rowCount() == 1 and page.selected_calibration_id() == detail.summary.calibration_id
    assert page.detail.bars is not None and len(page.detail.bars.opts["height"]) == detail.document["view_count"]


def test_a_calibration_that_cannot_run_says_why_and_stores_nothing(
        qtbot: QtBot, services: Services, page: CalibrationPage) -> None:
    record_board(services, SMALL, frames=5)
    _show(qtbot, page)
    page.form.board.setCurrentText("chessboard:9x6:25")
    page.form.every.setValue(1)

    qtbot.mouseClick(page.form.button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: page.form.button.isEnabled(), timeout=WAIT_MS)
    assert page.form.status.text().startswith("Not calibrated: the board was found in 5 of 5 views but 8 are needed")
    assert page.model.rowCount() == 0
