"""The Calibration page on real stored calibrations, and calibrating from a real board recording."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from pytestqt.qtbot import QtBot
from sqlalchemy import func, select

from labrig.bootstrap import Services
from labrig.calibration.board_captures import calibrate_from_capture, committed_captures
from labrig.calibration.camera import CalibrationThresholds, coverage_counts
from labrig.calibration.views import Validity, ViewError, load_calibration_detail, load_view_frame
from labrig.capture.media import load_capture
from labrig.capture.sources import Mode
from labrig.domain.recordings import RecordingPurpose
from labrig.store.models import CalibrationRecord
from labrig.ui.calibration.form import NO_PLANE
from labrig.ui.calibration.model import VERDICT_COLUMN
from labrig.ui.calibration.overlays import BLANK, EMPTY_CELL
from labrig.ui.calibration.page import CalibrationPage
from labrig.ui.calibration.view import REJECTED, USED
from labrig.ui.shell.bridge import EventBridge
from tests.support.analysis_runs import (
    BOARD,
    MARKERS,
    BoardPosesCamera,
    calibrate_markers_camera,
    record,
    record_board,
    store_as_v1,
)
from tests.ui.analysis_helpers import WAIT_MS, click_row

SMALL = Mode(640, 360, 30.0)  # quick to render and detect


@pytest.fixture
def page(qtbot: QtBot, services: Services, bridge: EventBridge) -> Iterator[CalibrationPage]:
    page = CalibrationPage(services.calibration, bridge)
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
    qtbot.waitUntil(
        lambda: (
            page.detail.current is not None
            and page.detail.current.summary.calibration_id == calibration_id
        ),
        timeout=WAIT_MS,
    )


def _verdict_shown(page: CalibrationPage, calibration_id: str) -> str:
    return str(page.model.index(page.model.row_of(calibration_id) or 0, VERDICT_COLUMN).data())


def test_stored_calibrations_show_binding_verdict_and_per_view_errors_with_rejected_views_marked(
    qtbot: QtBot, services: Services, page: CalibrationPage
) -> None:
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
    assert not page.detail.coverage_note.isVisible() and page.detail.coverage_map.isVisible()
    assert (
        "no frame to show: the views were image or video files given by name"
        in page.detail.frame_caption.text()
    )
    assert (
        page.detail.overlay.image.image is not None
        and (page.detail.overlay.image.image == BLANK).all()
    )

    _open(qtbot, page, bad.id)

    assert "NOT VALID" in page.detail.verdict.text()
    assert page.detail.reasons.isVisible()
    assert "LABRIG_RMS_TOO_HIGH" in page.detail.reasons.text()
    assert "not bound: it did not validate" in page.detail.binding.text()
    assert page.detail.bars is not None
    assert all(b.color().name() == USED for b in page.detail.bars.opts["brushes"])


def test_calibrating_from_a_board_recording_runs_off_the_gui_thread_and_shows_its_verdict(
    qtbot: QtBot, services: Services, page: CalibrationPage
) -> None:
    board = record_board(services, SMALL)
    plane = record_board(services, SMALL, scene="plane", frames=2)
    _show(qtbot, page)
    assert page.model.rowCount() == 0
    form = page.form
    # board recordings as boards, plane recordings as planes (after "none"), each picked
    assert form.capture.count() == 1 and form.plane.count() == 2
    assert form.plane.itemText(0) == NO_PLANE
    assert form.capture.currentData().capture_id == board
    assert form.plane.currentData().capture_id == plane
    form.board.setCurrentText("virtual-9x6-25")
    form.every.setValue(1)

    qtbot.mouseClick(form.button, Qt.MouseButton.LeftButton)

    # the solve runs elsewhere
    assert not form.button.isEnabled() and form.button.text() == "Calibrating…"
    qtbot.waitUntil(lambda: page.detail.current is not None, timeout=WAIT_MS)
    detail = page.detail.current
    assert detail is not None and detail.summary.validity is Validity.IN_USE
    assert detail.summary.has_plane and detail.summary.mode == SMALL.label()
    assert form.button.isEnabled()
    assert ", valid; outputs in mm through the plane view." in form.status.text()
    assert page.model.rowCount() == 1 and page.selected_key() == detail.summary.calibration_id
    assert (
        page.detail.bars is not None
        and len(page.detail.bars.opts["height"]) == detail.document["view_count"]
    )


def test_a_moving_board_given_as_the_plane_view_is_refused_and_nothing_is_stored(
    qtbot: QtBot, services: Services, page: CalibrationPage
) -> None:
    record_board(services, SMALL)
    # recorded as the plane view, but the board was still being moved about
    moving = BoardPosesCamera("board", paced=False, noise=1.0, frames_limit=4)
    record(services, None, camera=moving, mode=SMALL, purpose=RecordingPurpose.PLANE)
    _show(qtbot, page)
    assert page.form.plane.currentData() is not None, "the plane recording is picked"
    page.form.board.setCurrentText("virtual-9x6-25")
    page.form.every.setValue(1)

    qtbot.mouseClick(page.form.button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: page.form.button.isEnabled(), timeout=WAIT_MS)
    status = page.form.status.text()
    assert status.startswith("Not calibrated: the board moved during the plane recording"), status
    assert "keep it still, and record it again" in status
    assert page.model.rowCount() == 0
    with services.store.read() as db:
        assert db.scalar(select(func.count()).select_from(CalibrationRecord)) == 0


def test_a_calibration_that_cannot_run_says_why_and_stores_nothing(
    qtbot: QtBot, services: Services, page: CalibrationPage
) -> None:
    record_board(services, SMALL, frames=5)
    _show(qtbot, page)
    page.form.board.setCurrentText("chessboard:9x6:25")
    page.form.every.setValue(1)

    qtbot.mouseClick(page.form.button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: page.form.button.isEnabled(), timeout=WAIT_MS)
    assert page.form.status.text().startswith(
        "Not calibrated: the board was found in 5 of 5 views but 8 are needed"
    )
    assert page.model.rowCount() == 0


def _board_calibration(services: Services) -> str:
    """A calibration from a committed board recording (20 frames, every one a view): its id."""
    record_board(services, SMALL)
    [board] = committed_captures(services.store)
    return calibrate_from_capture(services.store, BOARD, board, every=1).stored.id


def _click_bar(qtbot: QtBot, page: CalibrationPage, index: int) -> None:
    assert page.detail.current is not None
    plot, view = page.detail.plot, page.detail.current.views[index]
    box, target = plot.getPlotItem().getViewBox(), QPointF(index, view.error_px / 2)
    # the plot fits its range to the bars when it next paints, not when they are set: until then the
    # click lands outside it
    qtbot.waitUntil(lambda: box.viewRect().contains(target), timeout=WAIT_MS)
    at = plot.mapFromScene(box.mapViewToScene(target))
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=at)


def _wait_for_frame(qtbot: QtBot, page: CalibrationPage, view: ViewError) -> None:
    frame = view.name.rpartition("#")[2]
    qtbot.waitUntil(
        lambda: (
            page.detail.picked == view.name
            and f"frame {frame} of recording" in page.detail.frame_caption.text()
        ),
        timeout=WAIT_MS,
    )


def _shown_corners(page: CalibrationPage) -> np.ndarray:
    x, y = page.detail.overlay.corners.getData()
    return np.column_stack([x, y])


def test_a_picked_view_shows_its_own_frame_with_its_stored_corners_over_it(
    qtbot: QtBot, services: Services, page: CalibrationPage
) -> None:
    calibration_id = _board_calibration(services)
    _show(qtbot, page)
    _open(qtbot, page, calibration_id)
    detail = page.detail.current
    assert detail is not None and detail.source is not None
    views = detail.views
    assert page.detail.view_list.count() == len(views) == 20
    # the bars' order
    assert [page.detail.view_list.itemData(i) for i in range(20)] == [v.name for v in views]

    _click_bar(qtbot, page, 5)

    _wait_for_frame(qtbot, page, views[5])
    assert page.detail.view_list.currentIndex() == 5
    assert np.array_equal(_shown_corners(page), views[5].corners)
    frame = load_view_frame(services.store, detail, views[5].name)
    assert frame is not None and page.detail.overlay.image.image.shape == frame.shape == (
        SMALL.height,
        SMALL.width,
        3,
    )
    assert np.array_equal(page.detail.overlay.image.image, frame[..., ::-1])  # RGB on screen
    first_x, first_y = page.detail.overlay.first.getData()
    assert (first_x[0], first_y[0]) == tuple(views[5].corners[0])
    assert page.detail.bars is not None and page.detail.bars.opts["pens"][5].width() == 2
    assert f"{views[5].error_px:.3f} px" in page.detail.frame_caption.text()

    page.detail.view_list.setFocus()
    qtbot.keyClick(page.detail.view_list, Qt.Key.Key_Down)
    # before the first read ends: only the newest is shown
    qtbot.keyClick(page.detail.view_list, Qt.Key.Key_Down)

    _wait_for_frame(qtbot, page, views[7])
    qtbot.waitUntil(lambda: not page.busy, timeout=WAIT_MS)
    assert page.detail.picked == views[7].name and np.array_equal(
        _shown_corners(page), views[7].corners
    )
    # a stale answer arriving late
    page.detail.show_frame(calibration_id, views[6].name, np.zeros_like(frame))
    assert np.array_equal(_shown_corners(page), views[7].corners)
    assert page.detail.overlay.image.image.any()


def test_the_coverage_map_counts_the_used_views_corners_with_empty_cells_marked(
    qtbot: QtBot, services: Services, page: CalibrationPage
) -> None:
    stored = calibrate_markers_camera(services, SMALL, reject_one=True)
    document = load_calibration_detail(services.store, stored.id).document
    _show(qtbot, page)
    _open(qtbot, page, stored.id)

    used = np.concatenate([v["corners"] for v in document["views"]])
    expected = coverage_counts(used, (SMALL.width, SMALL.height))
    shown = page.detail.coverage_map.counts
    assert shown is not None and shown.tolist() == expected.tolist()
    assert np.count_nonzero(shown) / shown.size == document["coverage"]
    colours = page.detail.coverage_map.cells.image
    assert colours.shape == (6, 8, 4) and (shown == 0).any()
    assert all(
        (tuple(colours[r, c]) == EMPTY_CELL) == (shown[r, c] == 0)
        for r in range(6)
        for c in range(8)
    )
    x, _ = page.detail.coverage_map.dots.getData()
    assert len(x) == len(used) == shown.sum()
    assert f"{document['coverage']:.0%} of the 8×6 grid cells" in page.detail.coverage.text()


def test_a_calibration_stored_before_corners_were_kept_shows_figures_and_says_to_calibrate_again(
    qtbot: QtBot, services: Services, page: CalibrationPage
) -> None:
    v1_id = store_as_v1(
        services.store, calibrate_markers_camera(services, SMALL, reject_one=True).id
    )
    _show(qtbot, page)
    _open(qtbot, page, v1_id)

    detail = page.detail.current
    assert detail is not None and json.dumps(detail.document).count("corners") == 0
    assert page.detail.coverage_note.isVisible() and not page.detail.coverage_map.isVisible()
    assert "made before Labrig kept where the corners fell" in page.detail.coverage_note.text()
    assert "calibrate again" in page.detail.coverage_note.text()
    assert page.detail.bars is not None and len(page.detail.bars.opts["height"]) == 20
    assert page.detail.coverage.value() == round(detail.document["coverage"] * 100)
    assert "0.0" in page.detail.figures["rms"].text() and "VALID" in page.detail.verdict.text()
    assert "made before Labrig kept" in page.detail.frame_caption.text()
    assert page.detail.overlay.corners.getData()[0].size == 0


def test_a_recording_whose_media_is_gone_says_what_to_do_and_still_draws_the_corners(
    qtbot: QtBot, services: Services, page: CalibrationPage
) -> None:
    calibration_id = _board_calibration(services)
    [board] = committed_captures(services.store)
    for segment in load_capture(services.store, board.manifest_sha256).segments:
        segment.unlink()
    _show(qtbot, page)
    _open(qtbot, page, calibration_id)

    caption = page.detail.frame_caption
    qtbot.waitUntil(lambda: "cannot be shown" in caption.text(), timeout=WAIT_MS)

    detail = page.detail.current
    assert detail is not None and page.detail.picked == detail.views[0].name
    assert "missing from the media store" in caption.text() and "labrig verify" in caption.text()
    assert np.array_equal(_shown_corners(page), detail.views[0].corners)
    assert (
        page.detail.overlay.image.image is not None
        and (page.detail.overlay.image.image == BLANK).all()
    )


def test_a_calibration_shows_its_progress_in_the_form_to_the_end(
    qtbot: QtBot, services: Services, page: CalibrationPage
) -> None:
    record_board(services, SMALL)
    _show(qtbot, page)
    form = page.form
    form.board.setCurrentText("virtual-9x6-25")
    form.every.setValue(1)
    qtbot.mouseClick(form.button, Qt.MouseButton.LeftButton)
    assert form.progress.shown and form.progress.task is not None
    shown: list[float] = []
    form.progress.task.progressed.connect(lambda fraction, _message: shown.append(fraction))
    qtbot.waitUntil(lambda: form.status.text().startswith("Calibration "), timeout=WAIT_MS)
    # the last value arrives before the bar hides
    assert shown and shown == sorted(shown) and shown[-1] == 1.0
    assert not form.progress.shown and form.button.isEnabled()


def test_cancelling_a_calibration_in_the_window_stores_nothing(
    qtbot: QtBot, services: Services, page: CalibrationPage
) -> None:
    record_board(services, SMALL)
    _show(qtbot, page)
    form = page.form
    form.board.setCurrentText("virtual-9x6-25")
    release = threading.Event()
    # the solve thread is busy: the click waits
    page._solves.submit(release.wait, lambda _: None, lambda _: None)
    qtbot.mouseClick(form.button, Qt.MouseButton.LeftButton)
    assert form.progress.shown and form.button.text() == "Calibrating…"
    qtbot.mouseClick(form.progress.cancel_button, Qt.MouseButton.LeftButton)
    assert (
        form.progress.cancel_button.text() == "Cancelling…"
        and not form.progress.cancel_button.isEnabled()
    )
    release.set()  # the calibration starts now, with its cancel already asked for
    qtbot.waitUntil(lambda: form.status.text().startswith("Not calibrated:"), timeout=WAIT_MS)
    assert "cancelled at your request" in form.status.text()
    assert not form.progress.shown and form.button.isEnabled()
    assert services.calibration.calibrations() == [] and page.model.rowCount() == 0
