"""Calibration with real OpenCV on PNGs of the virtual camera's board and warped ChArUco
boards, against truth."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import cv2
import numpy as np
import pytest

from labrig.calibration.boards import _CLASSIC as BOARD_FLAGS
from labrig.calibration.boards import (
    Board,
    BoardSpecError,
    Detection,
    charuco_board,
    detect,
    load_boards,
    parse_board,
)
from labrig.calibration.camera import (
    BoardNotFoundError,
    CalibrationNotValidError,
    CalibrationResult,
    CalibrationThresholds,
    DegenerateViewsError,
    ImageSizeMismatchError,
    TooFewViewsError,
    View,
    bind,
    calibrate,
    calibrate_views,
    coverage_counts,
)
from labrig.calibration.images import (
    ImageUnreadableError,
    frames_from_video,
    load_images,
    load_views,
)
from labrig.calibration.plane import pixels_to_mm, plane_homography
from labrig.capture.sources import Mode
from labrig.capture.virtual import CameraModel, VirtualCamera
from labrig.errors import UsageError

TRUTH = CameraModel()
CHESS = parse_board("chessboard:9x6:25")
CHARUCO = parse_board("charuco:5x7:30:22:DICT_4X4_50")
# 20 frames over 30 s of the board's trajectory: tilts up to ~30°, coverage ~0.48
FRAMES = range(0, 900, 45)


def write_board_pngs(folder: Path, camera: VirtualCamera | None = None) -> list[Path]:
    camera = camera or VirtualCamera("board", paced=False)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"board_{i:04d}.png" for i in FRAMES]
    for i, path in zip(FRAMES, paths, strict=True):
        cv2.imwrite(str(path), camera.render(i))
    return paths


def wave(image: np.ndarray, amplitude: float = 3.0) -> np.ndarray:
    """A non-projective ripple: corners move by up to ``amplitude`` px in a way no pose explains."""
    h, w = image.shape[:2]
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    dx, dy = amplitude * np.sin(y / 120 * 2 * np.pi), amplitude * np.sin(x / 120 * 2 * np.pi)
    return cv2.remap(image, x + dx.astype(np.float32), y + dy.astype(np.float32), cv2.INTER_LINEAR)


@pytest.fixture(scope="module")
def board_pngs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_board_pngs(tmp_path_factory.mktemp("board"))


@pytest.fixture(scope="module")
def solved(board_pngs: list[Path]) -> CalibrationResult:
    return calibrate_views(load_images(board_pngs), CHESS)


def test_the_virtual_camera_is_recovered(solved: CalibrationResult) -> None:
    k, d = solved.camera_matrix, solved.dist
    assert abs(k[0, 0] / TRUTH.fx - 1) < 0.005 and abs(k[1, 1] / TRUTH.fy - 1) < 0.005
    assert abs(k[0, 2] - TRUTH.cx) < 2 and abs(k[1, 2] - TRUTH.cy) < 2
    assert -0.07 < d[0] < -0.03  # truth -0.05: barrel
    assert solved.rms_px < 0.2 and max(e for _, e in solved.view_errors) < 0.3
    assert solved.view_count == 20 and not solved.rejected and not solved.skipped
    assert 0.4 <= solved.coverage <= 1 and solved.pose_spread_deg > 30
    assert solved.valid and solved.reasons == ()


def test_the_result_is_versioned_json_and_deterministic(
    board_pngs: list[Path], solved: CalibrationResult
) -> None:
    doc = json.loads(json.dumps(solved.to_json()))
    assert doc["schema"] == "labrig.calibration/2" and doc["board"]["spec"] == "chessboard:9x6:25"
    assert (
        doc["view_count"] == 20
        and len(doc["views"]) == 20
        and doc["views"][0]["name"] == "board_0000.png"
    )
    assert (
        doc["valid"] is True
        and doc["coverage_grid"] == [8, 6]
        and set(doc["distortion"]) == {"k1", "k2", "p1", "p2", "k3"}
    )
    assert calibrate_views(load_images(board_pngs), CHESS).digest() == solved.digest()


def test_the_document_keeps_each_views_corners_as_detected(
    board_pngs: list[Path], solved: CalibrationResult
) -> None:
    doc = json.loads(json.dumps(solved.to_json(), sort_keys=True))
    assert doc["source"] is None  # files given by name: Labrig keeps no copy to show again
    for view, path in zip(doc["views"], board_pngs, strict=True):
        found = detect(cv2.imread(str(path)), CHESS)
        assert found is not None and view["name"] == path.name
        assert view["ids"] == found.ids.tolist() == list(range(54))
        assert np.abs(np.asarray(view["corners"]) - found.corners).max() <= 1e-3
        # rounded: a stable digest
        assert all(round(x, 3) == x for corner in view["corners"] for x in corner)
    counts = coverage_counts(np.concatenate([v["corners"] for v in doc["views"]]), (1280, 720))
    assert counts.shape == (6, 8) and counts.sum() == 20 * 54
    assert np.count_nonzero(counts) / counts.size == doc["coverage"] == solved.coverage


def test_coverage_counts_corners_per_grid_cell_with_the_edges_in_the_edge_cells() -> None:
    points = [[0, 0], [159.9, 119.9], [160, 0], [1279.9, 719.9], [1280, 720], [-3, 800], [640, 360]]
    counts = coverage_counts(points, (1280, 720))  # cells of 160 × 120 px
    expected = np.zeros((6, 8), dtype=np.int64)
    expected[0, 0], expected[0, 1], expected[5, 7], expected[5, 0], expected[3, 4] = 2, 1, 2, 1, 1
    assert counts.tolist() == expected.tolist()
    assert coverage_counts(points, (1280, 720), grid=(2, 1)).tolist() == [[4, 3]]


def test_a_corrupted_view_is_rejected_by_name_and_the_solve_repeated(
    board_pngs: list[Path], tmp_path: Path
) -> None:
    views = list(load_images(board_pngs))
    views[6] = View("rippled.png", wave(views[6].image))
    result = calibrate_views(views, CHESS)
    [(name, error, limit)] = result.rejected
    assert name == "rippled.png" and error > 1.0 and limit == pytest.approx(0.5)
    [kept_out] = result.to_json()["rejected"]
    found = detect(views[6].image, CHESS)
    assert found is not None and kept_out["ids"] == found.ids.tolist()
    assert np.abs(np.asarray(kept_out["corners"]) - found.corners).max() <= 1e-3
    assert "rippled.png" not in dict(result.view_errors) and result.view_count == 19
    assert abs(result.camera_matrix[0, 0] / TRUTH.fx - 1) < 0.005 and result.valid


def _charuco_views(count: int = 12) -> tuple[list[View], list[np.ndarray]]:
    """The board image warped by true homographies K·[r1 r2 t] of a distortion-free camera, rendered
    at 2× and area-averaged down so edges are anti-aliased like a real sensor's."""
    scale, pad = 4.0, 60  # px per mm of the printed board, white margin px
    printed = charuco_board(CHARUCO).generateImage(
        (int(150 * scale), int(210 * scale)), marginSize=0
    )
    printed = cv2.copyMakeBorder(printed, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)
    mm_to_printed = np.array([[scale, 0, pad - 0.5], [0, scale, pad - 0.5], [0, 0, 1]])
    to_2x = np.array([[2, 0, 0.5], [0, 2, 0.5], [0, 0, 1.0]])
    views, homographies = [], []
    for i in range(count):
        a = 2 * np.pi * i / count
        rot, _ = cv2.Rodrigues(
            np.array([0.45 * np.sin(a), 0.45 * np.cos(1.3 * a), 0.3 * np.sin(0.7 * a)])
        )
        centre = np.array([180 * np.cos(a), 90 * np.sin(2 * a), 650 + 80 * np.sin(a)])
        h = TRUTH.matrix() @ np.column_stack(
            [rot[:, 0], rot[:, 1], centre - rot @ [75.0, 105.0, 0.0]]
        )
        big = cv2.warpPerspective(
            printed, to_2x @ h @ np.linalg.inv(mm_to_printed), (2560, 1440), borderValue=70
        )
        frame = cv2.resize(big, (1280, 720), interpolation=cv2.INTER_AREA)
        views.append(View(f"charuco_{i:02d}.png", cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)))
        homographies.append(h)
    return views, homographies


def test_charuco_views_are_detected_and_calibrate() -> None:
    views, homographies = _charuco_views()
    detection = detect(views[0].image, CHARUCO)
    assert detection is not None and len(detection.ids) == 24
    truth = cv2.perspectiveTransform(
        CHARUCO.object_points()[detection.ids][:, None, :2], homographies[0]
    )
    assert np.abs(detection.corners - truth.reshape(-1, 2)).max() < 0.3
    result = calibrate_views(views, CHARUCO)
    k = result.camera_matrix
    # looser than the chessboard: synthetic warps of a printed board, no lens distortion in the
    # truth
    assert (
        abs(k[0, 0] / TRUTH.fx - 1) < 0.01
        and abs(k[0, 2] - TRUTH.cx) < 5
        and abs(k[1, 2] - TRUTH.cy) < 5
    )
    assert abs(result.dist[0]) < 0.05 and result.rms_px < 0.2 and result.valid, result.reasons


def test_a_grainy_picture_the_classic_detector_misses_is_found_by_the_sector_detector(
    board_pngs: list[Path],
) -> None:
    """Grain that defeats OpenCV's classic chessboard search (a dim room, a high gain) still
    gives the corners, through the sector-based search; a picture without a board gives
    nothing."""
    clean = cv2.imread(str(board_pngs[0]))
    found = detect(clean, CHESS)
    assert found is not None
    grain = np.random.default_rng(7).normal(0.0, 45.0, clean.shape)
    grainy = np.clip(clean + grain, 0, 255).astype(np.uint8)
    gray = cv2.cvtColor(grainy, cv2.COLOR_BGR2GRAY)
    assert not cv2.findChessboardCorners(gray, CHESS.corner_grid, flags=BOARD_FLAGS)[0]
    rescued = detect(grainy, CHESS)
    assert rescued is not None and len(rescued.corners) == CHESS.corner_count
    assert np.abs(rescued.corners - found.corners).max() < 1.0
    blank = np.clip(np.full_like(clean, 128) + grain, 0, 255).astype(np.uint8)
    assert detect(blank, CHESS) is None


def test_a_small_picture_of_small_squares_is_found_though_the_quick_check_misses_it() -> None:
    """A 320x240 webcam's picture of the board, its squares ~10 px: OpenCV's quick check (and so
    the classic search) misses it; up to 640x480 the sector-based search is always tried."""
    camera = VirtualCamera("board", paced=False)
    camera.open(Mode(640, 480, 30.0))
    big = camera.render(0)
    small = cv2.resize(big, (320, 240), interpolation=cv2.INTER_AREA)
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    assert not cv2.checkChessboard(gray, CHESS.corner_grid)
    found, reference = detect(small, CHESS), detect(big, CHESS)
    assert found is not None and reference is not None
    assert np.abs(found.corners * 2 - reference.corners).max() < 1.5  # px of the 640x480 picture


def test_plane_homography_maps_pixels_to_board_millimetres(solved: CalibrationResult) -> None:
    camera = VirtualCamera("board", paced=False)
    frame = FRAMES[3]
    detection = detect(camera.render(frame), CHESS, "one")
    assert detection is not None
    truth = camera.truth(frame)
    # same corner order as the truth
    assert np.abs(detection.corners - truth["corners_px"]).max() < 0.3
    h = plane_homography(solved, detection, CHESS)
    assert (
        np.abs(pixels_to_mm(detection.corners, solved, h) - CHESS.object_points()[:, :2]).max()
        < 0.5
    )
    # points off the corner grid, out to the board's white margin: extrapolation through the lens
    # model
    plane = np.array(
        [
            [-50.0, -50.0, 0],
            [250.0, -50.0, 0],
            [250.0, 175.0, 0],
            [-50.0, 175.0, 0],
            [112.5, 62.5, 0],
        ]
    )
    image = TRUTH.project(plane, truth["rvec"], truth["tvec"])
    assert np.abs(pixels_to_mm(image, solved, h) - plane[:, :2]).max() < 0.5


def test_no_board_anywhere_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "markers.png"
    cv2.imwrite(str(path), VirtualCamera("markers", paced=False).render(0))
    with pytest.raises(BoardNotFoundError) as err:
        calibrate_views(load_images([path]), CHESS)
    assert (
        err.value.code == "LABRIG_BOARD_NOT_FOUND"
        and "not found in any of the 1 views" in err.value.message
    )
    # read in the window as on the command line: no command-line option named
    assert "--" not in err.value.message and "the board chosen" in err.value.message


def test_three_views_are_too_few(board_pngs: list[Path]) -> None:
    with pytest.raises(TooFewViewsError) as err:
        calibrate_views(load_images(board_pngs[:3]), CHESS)
    assert (
        err.value.code == "LABRIG_TOO_FEW_VIEWS"
        and "found in 3 of 3 views but 8 are needed" in err.value.message
    )


def test_ten_copies_of_one_view_are_degenerate(board_pngs: list[Path]) -> None:
    [view] = load_images(board_pngs[4:5])
    try:
        result = calibrate_views([View(f"copy{i}.png", view.image) for i in range(10)], CHESS)
    except DegenerateViewsError:
        return  # OpenCV refusing the solve outright is the other acceptable outcome
    codes = [r.code for r in result.reasons]
    assert not result.valid and "LABRIG_DEGENERATE_VIEWS" in codes
    assert result.pose_spread_deg < 1


def test_a_solve_opencv_refuses_is_a_typed_error() -> None:
    collapsed = [
        Detection(f"v{i}", np.arange(54), np.tile([[100.0, 100.0]], (54, 1))) for i in range(8)
    ]
    with pytest.raises(DegenerateViewsError, match="move and tilt the board"):
        calibrate(collapsed, (1280, 720), CHESS)


def test_unreadable_files_are_refused(tmp_path: Path) -> None:
    fake = tmp_path / "notes.png"
    fake.write_text("not a picture", encoding="utf-8")
    fake_video = tmp_path / "clip.avi"
    fake_video.write_text("not a video", encoding="utf-8")
    for path in (fake, tmp_path / "missing.png", fake_video):
        with pytest.raises(ImageUnreadableError) as err:
            list(load_views([path]))
        assert err.value.code == "LABRIG_IMAGE_UNREADABLE" and path.name in err.value.message


def test_views_of_different_sizes_are_refused(board_pngs: list[Path]) -> None:
    views = list(load_images(board_pngs[:2]))
    views[1] = View("small.png", cv2.resize(views[1].image, (640, 360)))
    with pytest.raises(
        ImageSizeMismatchError, match=r"small\.png is 640x360 but the views before it are 1280x720"
    ):
        calibrate_views(views, CHESS)


def test_video_frames_are_sampled_and_named(tmp_path: Path) -> None:
    camera, path = VirtualCamera("board", paced=False), tmp_path / "board.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (1280, 720))
    for i in range(12):
        writer.write(camera.render(i * 45))
    writer.release()
    views = list(frames_from_video(path, every=5))
    assert [v.name for v in views] == ["board.avi#0", "board.avi#5", "board.avi#10"]
    assert detect(views[1].image, CHESS) is not None  # MJPG artefacts do not hide the board


def test_thresholds_decide_validity(board_pngs: list[Path], solved: CalibrationResult) -> None:
    detections = [d for d in (detect(v.image, CHESS, v.name) for v in load_images(board_pngs)) if d]
    strict = calibrate(
        detections, (1280, 720), CHESS, CalibrationThresholds(max_rms_px=0.01, min_coverage=0.9)
    )
    assert [r.code for r in strict.reasons] == ["LABRIG_RMS_TOO_HIGH", "LABRIG_COVERAGE_TOO_LOW"]
    with pytest.raises(UsageError):
        CalibrationThresholds(min_views=2)


def test_a_valid_calibration_binds_to_a_device_for_a_limited_age(solved: CalibrationResult) -> None:
    at = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    binding = bind(solved, "SN1234@1280x720@30 BGR", at)
    payload = binding.event_payload()
    assert payload["calibration_id"] == solved.digest() and payload["rms_px"] == solved.rms_px
    assert (
        binding.valid_until == at + timedelta(days=30)
        and payload["valid_until"] == "2026-02-04T09:00:00+00:00"
    )
    assert binding.is_current(at + timedelta(days=29)) and not binding.is_current(
        at + timedelta(days=30)
    )
    with pytest.raises(UsageError, match="time zone"):
        bind(solved, "SN1234", datetime(2026, 1, 5))


def test_an_invalid_calibration_cannot_be_bound(board_pngs: list[Path]) -> None:
    strict = calibrate_views(
        load_images(board_pngs), CHESS, CalibrationThresholds(min_coverage=0.9)
    )
    with pytest.raises(CalibrationNotValidError, match="cover"):
        bind(strict, "SN1234", datetime(2026, 1, 5, tzinfo=UTC))


@pytest.mark.parametrize(
    "spec",
    [
        "chessboard:9x6",
        "chessboard:2x6:25",
        "chessboard:9x6:-1",
        "chessboard:9x6:abc",
        "charuco:5x7:30:40:DICT_4X4_50",
        "charuco:5x7:30:22:DICT_NOPE",
        "charuco:12x12:30:22:DICT_4X4_50",
        "hexagon:3x3:1",
        "no-such-board",
    ],
)
def test_bad_board_specs_are_refused(spec: str) -> None:
    with pytest.raises(BoardSpecError) as err:
        parse_board(spec)
    assert err.value.code == "LABRIG_BOARD_INVALID"


def test_board_specs_and_names() -> None:
    assert parse_board("chessboard:9x6:25") == Board("chessboard", 9, 6, 25.0)
    assert parse_board("charuco:5x7:30:22:dict_4x4_50") == Board(
        "charuco", 5, 7, 30.0, 22.0, "DICT_4X4_50"
    )
    named = load_boards()
    assert named["virtual-9x6-25"].spec() == "chessboard:9x6:25"
    assert parse_board("charuco-5x7-30").spec() == "charuco:5x7:30:22:DICT_4X4_50"
    assert CHARUCO.corner_count == 24 and CHARUCO.object_points().shape == (24, 3)
    with pytest.raises(BoardSpecError, match=r"labrig\.boards/1 document"):
        load_boards('{"schema": "labrig.boards/2", "boards": []}')
