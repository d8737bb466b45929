"""Reading stored calibrations for the Calibration screen, and calibrating from a committed board recording."""

from __future__ import annotations

from datetime import timedelta

import pytest

from labrig.analysis.board_captures import PlaneCaptureMismatchError, calibrate_from_capture, committed_captures
from labrig.analysis.calibration import BoardNotFoundError, CalibrationThresholds
from labrig.analysis.calibration_views import Validity, list_calibrations, load_calibration_detail
from labrig.analysis.calibrations import UnknownCalibrationError, current_calibration
from labrig.bootstrap import Services, bootstrap
from labrig.capture.sources import Mode
from labrig.store import Store
from labrig.store.types import utcnow
from tests.support.analysis_runs import MARKERS, calibrate_markers_camera, record_board

SMALL = Mode(640, 360, 30.0)
OTHER = Mode(640, 480, 30.0)


@pytest.fixture
def services(store: Store) -> Services:
    return bootstrap(store=store)


def test_each_calibration_is_judged_as_analysis_would_use_it(services: Services) -> None:
    older = calibrate_markers_camera(services, SMALL, now=utcnow() - timedelta(hours=2))
    newer = calibrate_markers_camera(services, SMALL, reject_one=True)
    expired = calibrate_markers_camera(services, OTHER, now=utcnow() - timedelta(days=40))
    strict = calibrate_markers_camera(services, SMALL, plane=False, now=utcnow() - timedelta(minutes=5),
                                      thresholds=CalibrationThresholds(max_rms_px=0.01))

    listed = {c.calibration_id: c for c in list_calibrations(services.store)}

    assert [c.calibration_id for c in list_calibrations(services.store)] == [newer.id, strict.id, older.id, expired.id]
    assert listed[newer.id].validity is Validity.IN_USE
    assert current_calibration(services.store, MARKERS.device_id, SMALL.label()).id == newer.id  # type: ignore[union-attr]
    assert listed[older.id].validity is Validity.SUPERSEDED
    assert listed[expired.id].validity is Validity.EXPIRED and listed[expired.id].age() == "40 d"
    assert listed[strict.id].validity is Validity.NOT_VALID and listed[strict.id].valid_until is None
    assert listed[newer.id].has_plane and not listed[strict.id].has_plane
    assert (listed[newer.id].device_id, listed[newer.id].mode) == (MARKERS.device_id, SMALL.label())
    for calibration_id, summary in listed.items():
        assert load_calibration_detail(services.store, calibration_id).summary == summary


def test_the_detail_lists_used_and_rejected_views_in_capture_order_with_the_reasons(services: Services) -> None:
    good = calibrate_markers_camera(services, SMALL, reject_one=True)
    detail = load_calibration_detail(services.store, good.id)

    names = [v.name for v in detail.views]
    assert names == [f"board-{i}" for i in range(0, 600, 30)]  # board-90 between board-60 and board-120
    [rejected] = [v for v in detail.views if v.rejected]
    assert rejected.name == "board-90" and rejected.limit_px is not None and rejected.error_px > rejected.limit_px
    assert detail.reasons == [] and detail.thresholds["max_rms_px"] == 1.0
    with pytest.raises(UnknownCalibrationError):
        load_calibration_detail(services.store, "0" * 64)


def test_a_board_recording_calibrates_its_own_device_and_mode_with_the_plane_scale(services: Services) -> None:
    board_id = record_board(services, SMALL)
    plane_id = record_board(services, SMALL, scene="plane", frames=2)
    captures = committed_captures(services.store)
    assert [c.capture_id for c in captures] == [plane_id, board_id]
    plane, board = captures
    assert (board.device_id, board.mode, board.frames, board.subject_code) == (MARKERS.device_id, SMALL.label(), 20,
                                                                                None)

    outcome = calibrate_from_capture(services.store, "virtual-9x6-25", board, plane, every=1)

    assert outcome.result.valid and outcome.plane and outcome.result.view_count >= 8
    [stored] = list_calibrations(services.store)
    assert stored.calibration_id == outcome.stored.id and stored.validity is Validity.IN_USE and stored.has_plane
    assert (stored.device_id, stored.mode) == (board.device_id, board.mode)


def test_a_plane_recording_of_another_mode_or_without_the_board_is_refused_and_nothing_is_stored(
        services: Services) -> None:
    record_board(services, SMALL)
    record_board(services, OTHER, scene="plane", frames=2)
    record_board(services, SMALL, scene="markers", frames=2)
    no_board, other_mode, board = committed_captures(services.store)

    with pytest.raises(PlaneCaptureMismatchError, match="same camera and mode") as refused:
        calibrate_from_capture(services.store, "virtual-9x6-25", board, other_mode, every=1)
    assert refused.value.code == "LABRIG_PLANE_MISMATCH"
    with pytest.raises(BoardNotFoundError, match="not found in the plane recording"):
        calibrate_from_capture(services.store, "virtual-9x6-25", board, no_board, every=1)
    assert list_calibrations(services.store) == []
