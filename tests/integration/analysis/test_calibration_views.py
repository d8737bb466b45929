"""Reading stored calibrations for the Calibration screen, and calibrating from a committed
board recording."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import cv2
import numpy as np
import pytest

from labrig.bootstrap import Services, bootstrap
from labrig.calibration.board_captures import (
    PlaneCaptureMismatchError,
    calibrate_from_capture,
    committed_captures,
)
from labrig.calibration.boards import detect, parse_board
from labrig.calibration.camera import (
    BoardNotFoundError,
    CalibrationThresholds,
    View,
    calibrate_views,
    coverage_counts,
)
from labrig.calibration.images import frames_from_video
from labrig.calibration.stored import UnknownCalibrationError, current_calibration, save_calibration
from labrig.calibration.views import (
    Validity,
    ViewError,
    ViewFrameUnavailableError,
    list_calibrations,
    load_calibration_detail,
    load_view_frame,
    read_video_frame,
)
from labrig.capture.media import load_capture
from labrig.capture.sources import Mode
from labrig.capture.virtual import VirtualCamera
from labrig.store import Store
from labrig.store.types import utcnow
from tests.support.analysis_runs import (
    BOARD,
    MARKERS,
    BoardPosesCamera,
    calibrate_markers_camera,
    record_board,
    store_as_v1,
)

SMALL = Mode(640, 360, 30.0)
OTHER = Mode(640, 480, 30.0)


@pytest.fixture
def services(store: Store) -> Services:
    return bootstrap(store=store)


def test_each_calibration_is_judged_as_analysis_would_use_it(services: Services) -> None:
    older = calibrate_markers_camera(services, SMALL, now=utcnow() - timedelta(hours=2))
    newer = calibrate_markers_camera(services, SMALL, reject_one=True)
    expired = calibrate_markers_camera(services, OTHER, now=utcnow() - timedelta(days=40))
    strict = calibrate_markers_camera(
        services,
        SMALL,
        plane=False,
        now=utcnow() - timedelta(minutes=5),
        thresholds=CalibrationThresholds(max_rms_px=0.01),
    )

    listed = {c.calibration_id: c for c in list_calibrations(services.store)}

    assert [c.calibration_id for c in list_calibrations(services.store)] == [
        newer.id,
        strict.id,
        older.id,
        expired.id,
    ]
    assert listed[newer.id].validity is Validity.IN_USE
    assert current_calibration(services.store, MARKERS.device_id, SMALL.label()).id == newer.id  # type: ignore[union-attr]
    assert listed[older.id].validity is Validity.SUPERSEDED
    assert listed[expired.id].validity is Validity.EXPIRED and listed[expired.id].age() == "40 d"
    assert (
        listed[strict.id].validity is Validity.NOT_VALID and listed[strict.id].valid_until is None
    )
    assert listed[newer.id].has_plane and not listed[strict.id].has_plane
    assert (listed[newer.id].device_id, listed[newer.id].mode) == (MARKERS.device_id, SMALL.label())
    for calibration_id, summary in listed.items():
        assert load_calibration_detail(services.store, calibration_id).summary == summary


def test_the_detail_lists_used_and_rejected_views_in_capture_order_with_the_reasons(
    services: Services,
) -> None:
    good = calibrate_markers_camera(services, SMALL, reject_one=True)
    detail = load_calibration_detail(services.store, good.id)

    names = [v.name for v in detail.views]
    # board-90 between board-60 and board-120
    assert names == [f"board-{i}" for i in range(0, 600, 30)]
    [rejected] = [v for v in detail.views if v.rejected]
    assert (
        rejected.name == "board-90"
        and rejected.limit_px is not None
        and rejected.error_px > rejected.limit_px
    )
    assert detail.reasons == [] and detail.thresholds["max_rms_px"] == 1.0
    with pytest.raises(UnknownCalibrationError):
        load_calibration_detail(services.store, "0" * 64)


def test_a_board_recording_calibrates_its_own_device_and_mode_with_the_plane_scale(
    services: Services,
) -> None:
    board_id = record_board(services, SMALL)
    plane_id = record_board(services, SMALL, scene="plane", frames=2)
    captures = committed_captures(services.store)
    assert [c.capture_id for c in captures] == [plane_id, board_id]
    plane, board = captures
    assert (board.device_id, board.mode, board.frames, board.subject_code) == (
        MARKERS.device_id,
        SMALL.label(),
        20,
        None,
    )

    outcome = calibrate_from_capture(services.store, "virtual-9x6-25", board, plane, every=1)

    assert outcome.result.valid and outcome.plane and outcome.result.view_count >= 8
    [stored] = list_calibrations(services.store)
    assert (
        stored.calibration_id == outcome.stored.id
        and stored.validity is Validity.IN_USE
        and stored.has_plane
    )
    assert (stored.device_id, stored.mode) == (board.device_id, board.mode)


def test_a_plane_recording_of_another_mode_or_without_the_board_is_refused_and_nothing_is_stored(
    services: Services,
) -> None:
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


def test_a_board_recording_calibration_keeps_its_source_and_each_frame_shows_its_corners_again(
    services: Services,
) -> None:
    record_board(services, SMALL)
    [board] = committed_captures(services.store)
    outcome = calibrate_from_capture(services.store, BOARD, board, every=2)
    detail = load_calibration_detail(services.store, outcome.stored.id)

    assert detail.document["schema"] == "labrig.calibration/2" and detail.has_corners
    assert detail.source is not None and detail.source.capture_id == board.capture_id
    assert (detail.source.manifest_sha256, detail.source.every) == (board.manifest_sha256, 2)
    assert [int(v.name.rpartition("#")[2]) for v in detail.views] == list(range(0, 20, 2))
    for view in (detail.views[0], detail.views[4], detail.views[-1]):
        frame = load_view_frame(services.store, detail, view.name)
        assert frame is not None and frame.shape == (SMALL.height, SMALL.width, 3)
        found = detect(frame, parse_board(BOARD))
        assert (
            found is not None and view.corners is not None and found.ids.tolist() == list(view.ids)
        )
        # the very frame that was calibrated
        assert np.abs(found.corners - view.corners).max() < 0.01


def test_the_coverage_counts_are_the_used_views_corners_and_give_the_stored_coverage(
    services: Services,
) -> None:
    stored = calibrate_markers_camera(services, SMALL, reject_one=True)
    detail = load_calibration_detail(services.store, stored.id)
    used = [v for v in detail.views if not v.rejected]
    [rejected] = [v for v in detail.views if v.rejected]
    corners = detail.used_corners()
    counts = detail.coverage_counts()

    assert corners is not None and counts is not None and rejected.corners is not None
    assert corners.shape == (len(used) * 54, 2)
    # the solve did not use it
    assert not any((corners == point).all(axis=1).any() for point in rejected.corners)
    assert counts.tolist() == coverage_counts(corners, (SMALL.width, SMALL.height)).tolist()
    assert np.count_nonzero(counts) / counts.size == detail.document["coverage"]
    # views by name
    assert detail.source is None and load_view_frame(services.store, detail, used[0].name) is None


def test_a_calibration_stored_before_corners_were_kept_still_loads_without_them(
    services: Services,
) -> None:
    stored = calibrate_markers_camera(services, SMALL, reject_one=True)
    v2 = load_calibration_detail(services.store, stored.id)
    v1_id = store_as_v1(services.store, stored.id)

    v1 = load_calibration_detail(services.store, v1_id)

    assert v1.document["schema"] == "labrig.calibration/1" and v1_id != stored.id

    def shown(views: list[ViewError]) -> list[tuple[str, float, bool, float | None]]:
        return [(v.name, v.error_px, v.rejected, v.limit_px) for v in views]

    assert shown(v1.views) == shown(v2.views) and [v.rejected for v in v1.views].count(True) == 1
    assert all(v.corners is None and v.ids == () for v in v1.views) and not v1.has_corners
    assert v1.used_corners() is None and v1.coverage_counts() is None and v1.source is None
    assert v1.summary.validity is Validity.IN_USE and v1.image_size == (SMALL.width, SMALL.height)
    assert load_view_frame(services.store, v1, v1.views[0].name) is None


def test_a_recording_whose_media_file_is_gone_gives_a_typed_error_saying_what_to_do(
    services: Services,
) -> None:
    record_board(services, SMALL)
    [board] = committed_captures(services.store)
    outcome = calibrate_from_capture(services.store, BOARD, board, every=2)
    detail = load_calibration_detail(services.store, outcome.stored.id)
    [segment] = load_capture(services.store, board.manifest_sha256).segments
    segment.unlink()

    with pytest.raises(ViewFrameUnavailableError) as gone:
        load_view_frame(services.store, detail, detail.views[1].name)

    assert gone.value.code == "LABRIG_VIEW_FRAME_UNAVAILABLE"
    assert (
        "missing from the media store" in gone.value.message
        and "labrig verify" in gone.value.message
    )


def test_a_frame_is_read_again_as_calibration_read_it_whatever_the_codec(tmp_path: Path) -> None:
    camera = VirtualCamera("board", paced=False)
    camera.open(SMALL)
    # MJPG seeks; FFV1 is read up to it
    for fourcc, name in (("MJPG", "seek.avi"), ("FFV1", "decode-on.avi")):
        path = tmp_path / name
        writer = cv2.VideoWriter(
            str(path), cv2.VideoWriter.fourcc(*fourcc), 30.0, (SMALL.width, SMALL.height)
        )
        for i in range(12):
            writer.write(camera.render(i * 30))
        writer.release()
        sampled = {
            int(v.name.rpartition("#")[2]): v.image for v in frames_from_video(path, every=1)
        }
        assert len(sampled) == 12
        for index in (0, 7, 11):
            assert np.array_equal(read_video_frame(path, index), sampled[index]), (fourcc, index)
        with pytest.raises(ViewFrameUnavailableError, match="cannot be decoded"):
            read_video_frame(path, 12)


def test_views_are_listed_in_the_order_they_were_read_even_where_their_names_sort_otherwise(
    services: Services,
) -> None:
    """A recording's segments are files named by their digests: views of the second
    segment may sort first."""
    board = parse_board(BOARD)
    camera = BoardPosesCamera("board", noise=1.0)
    camera.open(SMALL)
    views = [
        View(f"{'f' if i < 6 else '0'}{'e' * 63}.avi#{i % 6}", camera.render(i)) for i in range(12)
    ]
    # a rejected view keeps its place among the others
    views[8] = View(views[8].name, _ripple(views[8].image))
    result = calibrate_views(views, board)
    assert [name for name, _, _ in result.rejected] == [views[8].name]
    stored = save_calibration(services.store, result, MARKERS.device_id, SMALL.label())
    detail = load_calibration_detail(services.store, stored.id)
    # not the 0…-named segment first
    assert [v.name for v in detail.views] == [v.name for v in views]
    assert [v.rejected for v in detail.views] == [i == 8 for i in range(12)]
    old = load_calibration_detail(services.store, store_as_v1(services.store, stored.id))
    # v1 documents: by name, as before
    assert [v.name for v in old.views][:6] == [v.name for v in views[6:]]


def _ripple(image: np.ndarray, amplitude: float = 3.0) -> np.ndarray:  # type: ignore[type-arg]
    """Bend the image a little, as a view whose corners were mis-detected would be."""
    h, w = image.shape[:2]
    xs, ys = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    return cv2.remap(
        image,
        xs + amplitude * np.sin(ys / 9.0),
        ys + amplitude * np.sin(xs / 11.0),
        cv2.INTER_LINEAR,
    )
