"""The virtual camera: real OpenCV rendering checked against its own ground truth by real
OpenCV analysis."""

from __future__ import annotations

import time

import cv2
import numpy as np
import pytest

from labrig.capture.sources import FrameSource, Mode
from labrig.capture.virtual import (
    MARKERS_DEVICE_ID,
    VIRTUAL_CAMERA_NAME,
    CameraModel,
    SceneName,
    SceneSwitch,
    UnsupportedModeError,
    UnsupportedSceneError,
    VirtualCamera,
)

SUBPIX = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 40, 0.001)


def opened(
    scene: SceneName,
    mode: Mode | None = None,
    *,
    paced: bool = True,
    frames_limit: int | None = None,
    fail_after: int | None = None,
) -> VirtualCamera:
    cam = VirtualCamera(scene, paced=paced, frames_limit=frames_limit, fail_after=fail_after)
    cam.open(mode)
    return cam


def board_corners(cam: VirtualCamera, index: int) -> np.ndarray | None:
    grey = cv2.cvtColor(cam.render(index), cv2.COLOR_BGR2GRAY)
    found, corners = cv2.findChessboardCorners(grey, (9, 6))
    if not found:
        return None
    return cv2.cornerSubPix(grey, corners, (5, 5), (-1, -1), SUBPIX)


@pytest.mark.parametrize("scene", ["markers", "board"])
@pytest.mark.parametrize("mode", [None, Mode(640, 480, 15.0)])
def test_each_scene_renders_frames_of_the_mode(scene: SceneName, mode: Mode | None) -> None:
    cam: FrameSource = opened(scene, mode, paced=False)
    expected = mode or Mode(1280, 720, 30.0)
    frame = cam.read()
    assert frame is not None
    assert frame.shape == (expected.height, expected.width, 3) and frame.dtype == np.uint8
    assert isinstance(cam, VirtualCamera)
    assert cam.name == VIRTUAL_CAMERA_NAME  # one camera, whatever it shows
    assert cam.frame_index == 1


def test_the_model_scales_with_the_mode() -> None:
    cam = opened("markers", Mode(640, 360, 30.0))
    assert cam.model == CameraModel().scaled(640, 360)
    assert cam.model.fx == pytest.approx(500.0) and cam.model.cx == pytest.approx(319.5)
    assert cam.model.matrix().shape == (3, 3) and cam.model.dist()[0] == pytest.approx(-0.05)


@pytest.mark.parametrize(
    "mode", [Mode(1280, 720, 0.0), Mode(0, 720, 30.0), Mode(1280, 720, 30.0, "YUYV")]
)
def test_a_mode_it_cannot_deliver_is_refused_with_a_code(mode: Mode) -> None:
    with pytest.raises(UnsupportedModeError) as refused:
        VirtualCamera().open(mode)
    assert refused.value.code == "LABRIG_MODE_UNSUPPORTED"


def test_paced_delivery_runs_at_the_mode_rate() -> None:
    cam = opened("markers", Mode(1280, 720, 30.0))
    arrivals = []
    start = time.monotonic()
    while time.monotonic() - start < 1.0:
        assert cam.read(timeout_s=1.0) is not None
        arrivals.append(time.monotonic())
    rate = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0])
    print(f"virtual camera paced delivery: {rate:.2f} fps for 30 fps")
    assert rate == pytest.approx(30.0, rel=0.10)


def test_a_paced_read_never_blocks_past_its_timeout() -> None:
    cam = opened("markers", Mode(320, 240, 2.0))
    assert cam.read() is not None  # the first frame is due at once; the next one 0.5 s later
    start = time.monotonic()
    assert cam.read(timeout_s=0.05) is None
    assert time.monotonic() - start < 0.3
    assert cam.read(timeout_s=1.0) is not None
    assert cam.frame_index == 2


def test_the_scene_is_a_pure_function_of_the_frame_index() -> None:
    streamed = opened("board", paced=False)
    frames = [frame for frame in (streamed.read() for _ in range(8)) if frame is not None]
    assert len(frames) == 8
    other = opened("board", paced=False)
    assert np.array_equal(frames[7], other.render(7))
    assert np.array_equal(other.render(7), other.render(7))
    assert not np.array_equal(frames[6], frames[7])


def test_a_limited_stream_ends_and_a_failed_one_stops_answering() -> None:
    ended = opened("markers", paced=False, frames_limit=3)
    assert [ended.read() is not None for _ in range(5)] == [True, True, True, False, False]
    pulled = opened("markers", paced=False, fail_after=2)
    assert [pulled.read() is not None for _ in range(4)] == [True, True, False, False]
    pulled.close()
    assert opened("markers", paced=False).read() is not None


@pytest.mark.parametrize("index", [0, 17, 45, 90, 133, 200, 299])
def test_marker_blobs_sit_at_their_true_image_positions(index: int) -> None:
    cam = opened("markers", paced=False)
    grey = cv2.cvtColor(cam.render(index), cv2.COLOR_BGR2GRAY)
    _, binary = cv2.threshold(grey, 100, 255, cv2.THRESH_BINARY)
    count, _, stats, centroids = cv2.connectedComponentsWithStats(binary)
    assert count - 1 == 3  # three markers, nothing else bright
    truth = cam.truth(index)["markers"]
    for marker in truth:
        distances = np.linalg.norm(centroids[1:] - np.array(marker["image_px"]), axis=1)
        assert distances.min() < 1.0, (marker["name"], distances.min())
    areas = stats[1:, cv2.CC_STAT_AREA]
    # 8 mm at about 1 m with f = 1000 px: an 8 px radius (201 px²), more or less the tilt and the
    # anti-aliased rim
    assert np.all((areas > 150) & (areas < 300)), areas


@pytest.mark.parametrize("index", [0, 40, 110, 230, 377, 512])
def test_chessboard_corners_are_found_at_their_true_positions(index: int) -> None:
    cam = opened("board", paced=False)
    corners = board_corners(cam, index)
    assert corners is not None, f"no chessboard found in frame {index}"
    truth = cam.truth(index)["corners_px"]
    errors = np.linalg.norm(corners.reshape(-1, 1, 2) - truth.reshape(1, -1, 2), axis=2).min(axis=1)
    assert len(errors) == 54 and errors.max() < 0.5, errors.max()


def test_a_calibration_from_board_frames_recovers_the_camera() -> None:
    cam = opened("board", paced=False)
    pattern = np.zeros((54, 3), np.float32)
    pattern[:, :2] = np.mgrid[0:9, 0:6].T.reshape(-1, 2) * 25.0
    found = [c for c in (board_corners(cam, i) for i in range(0, 30 * 40, 45)) if c is not None][
        :15
    ]
    assert len(found) == 15
    rms, matrix, dist, _, _ = cv2.calibrateCamera(
        [pattern] * 15, found, (1280, 720), None, None, flags=cv2.CALIB_FIX_K3
    )
    print(
        f"calibration from 15 virtual board frames: rms {rms:.3f} px, fx {matrix[0, 0]:.1f}, k1 "
        f"{dist[0, 0]:.4f}"
    )
    assert matrix[0, 0] == pytest.approx(cam.model.fx, rel=0.02)
    assert matrix[1, 1] == pytest.approx(cam.model.fy, rel=0.02)
    assert dist[0, 0] < 0  # barrel, like the model's k1 = -0.05


def test_unpaced_rendering_is_fast_enough_for_60_fps() -> None:
    scenes: tuple[SceneName, ...] = ("markers", "board")
    for scene in scenes:
        cam = opened(scene, Mode(1280, 720, 60.0), paced=False)
        cam.read()  # warm up
        count, start = 120, time.perf_counter()
        for _ in range(count):
            cam.read()
        fps = count / (time.perf_counter() - start)
        print(f"virtual camera {scene} 1280x720 unpaced: {fps:.0f} frames/s")
        assert fps >= 60


def test_the_scene_switch_shows_the_board_on_the_camera_that_records_the_markers() -> None:
    # one camera: flipping its switch is holding the board up to it, then laying it on the plane
    switch = SceneSwitch()
    cam = VirtualCamera(paced=False, noise=0.0, scene_of=switch.follow(MARKERS_DEVICE_ID))
    cam.open(Mode(1280, 720, 30.0))
    assert cam.name == VIRTUAL_CAMERA_NAME
    first = cam.read()
    assert first is not None and cam.truth(0)["scene"] == "markers"
    assert board_corners(cam, 1) is None

    switch.set(MARKERS_DEVICE_ID, "board")
    frame = cam.read()
    assert frame is not None and cam.scene_name == "board" and cam.frame_index == 2
    truth = cam.truth(1)
    found = board_corners(cam, 1)
    assert truth["scene"] == "board" and found is not None
    assert np.abs(found.reshape(-1, 2) - truth["corners_px"]).max() < 0.5  # the true corners

    switch.set(MARKERS_DEVICE_ID, "plane")
    assert [cam.truth(i)["scene"] for i in (5, 50)] == ["plane", "plane"]
    assert np.array_equal(cam.truth(5)["rvec"], cam.truth(50)["rvec"]), "it lies still"
    assert switch.get("virtual:other") == "markers"  # each camera has its own switch
    with pytest.raises(UnsupportedSceneError) as refused:
        switch.set(MARKERS_DEVICE_ID, "mirror")  # type: ignore[arg-type]
    assert refused.value.code == "LABRIG_SCENE_UNKNOWN" and "pick one of" in refused.value.message
    assert switch.get(MARKERS_DEVICE_ID) == "plane"  # unchanged by the refusal
