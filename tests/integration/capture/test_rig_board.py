"""The virtual rig's board scenes against their ground truth: calibration's detector (OpenCV's) and
OpenCV's ChArUco detector find the corners where the truth projects them through each lens, to a
tenth of a pixel for the chessboard (each pixel of the picture is the mean over its area, as a
sensor's is), the board on the floor gives each camera's true pose back to OpenCV's solvePnP, and
the moving board is seen by several cameras at once."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from labrig.calibration.boards import detect, named_board
from labrig.capture.rig_board import board_picture, charuco
from labrig.capture.rig_camera import VirtualRig
from labrig.capture.rig_world import rig_camera
from labrig.capture.sources import Mode

MODE = Mode(1280, 720, 30.0)


def chessboard_corners(img: np.ndarray) -> np.ndarray | None:
    """The corners calibration finds (``boards.detect``: OpenCV's detector and sub-pixel step)."""
    found = detect(img, named_board("virtual-rig-9x6-80"))
    return None if found is None else found.corners


def matched(found: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Found minus true corners, the detector's order turned to the truth's when it read the grid
    from the other end (a chessboard's first corner is ambiguous)."""
    d = found - truth
    return d if np.abs(d).max() < 20 else found[::-1] - truth


def test_the_floor_board_gives_each_camera_its_true_pose_back() -> None:
    rig = VirtualRig(scene="floor", epoch_ns=0, noise=2.0)
    for index in range(4):
        camera = rig.camera(index)
        camera.open(MODE)
        truth = rig.truth(index, MODE, 0)["board"]
        assert truth["seen"].all() and truth["board"] == "virtual-rig-9x6-80"
        # the board lies on the floor, its first corner at the world origin
        world = truth["corners_world_mm"]
        assert np.abs(world[:, 2]).max() < 1e-9 and np.allclose(world[0], 0.0)
        found = chessboard_corners(camera.render(0))
        assert found is not None, f"camera {index}"
        error = matched(found, truth["corners_px"])
        rms = float(np.sqrt((error**2).sum(axis=1).mean()))
        assert rms < 0.12 and np.abs(error).max() < 0.25, (index, rms)  # 0.22-0.29 px sampled once
        assert np.abs(error.mean(axis=0)).max() < 0.05
        # OpenCV's solvePnP, with the lens the rig says this camera has, finds where it stands
        model = rig_camera(index).model
        if np.abs(found - truth["corners_px"]).max() >= 20:
            found = found[::-1]
        ok, rvec, tvec = cv2.solvePnP(world, found, model.matrix(), model.dist())
        assert ok
        rot, _ = cv2.Rodrigues(rvec)
        centre = (-rot.T @ tvec).ravel()
        assert np.linalg.norm(centre - rig_camera(index).centre_mm) < 15.0  # mm, 3-4 m away


@pytest.mark.parametrize("kind", ["chessboard", "charuco"])
def test_the_moving_board_is_found_where_the_truth_projects_it(kind: str) -> None:
    rig = VirtualRig(scene="board", board=kind, epoch_ns=0, noise=2.0)  # type: ignore[arg-type]
    errors, views = [], 0
    for n in range(0, 30 * 9, 15):  # a turn of the board, every half second
        for index in range(4):
            truth = rig.truth(index, MODE, n)["board"]
            if not truth["seen"].all():
                continue
            camera = rig.camera(index)
            camera.open(MODE)
            img = camera.render(n)
            if kind == "chessboard":
                found = chessboard_corners(img)
                if found is not None:
                    errors.append(np.abs(matched(found, truth["corners_px"])).max())
            else:
                gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
                corners, ids, _, _ = cv2.aruco.CharucoDetector(charuco()).detectBoard(gray)
                if ids is not None and len(ids) >= 12:
                    d = corners.reshape(-1, 2) - truth["corners_px"][ids.ravel()]
                    errors.append(np.abs(d).max())
            views += 1
    assert views >= 15 and len(errors) >= 0.6 * views, (len(errors), views)
    # the worst corner of each view (0.25 px, up to 0.47, when each pixel was sampled once at its
    # centre); OpenCV's ChArUco corners are looser than its chessboard's
    assert float(np.median(errors)) < (0.12 if kind == "chessboard" else 0.6), np.median(errors)
    assert max(errors) < (0.25 if kind == "chessboard" else 1.5), max(errors)


def test_the_moving_board_is_seen_by_several_cameras_at_once() -> None:
    rig = VirtualRig(scene="board", epoch_ns=0)
    seen = np.array(
        [
            [rig.truth(c, MODE, n)["board"]["seen"].all() for c in range(4)]
            for n in range(0, 30 * 36, 6)
        ]
    )
    assert (seen.sum(axis=1) >= 2).mean() > 0.4  # instants two or more cameras see it whole
    # every camera sees it whole at times, and every neighbouring pair at the same times
    assert seen.any(axis=0).all()
    for a, b in ((0, 1), (1, 2), (2, 3), (3, 0)):
        assert (seen[:, a] & seen[:, b]).sum() >= 10


@pytest.mark.parametrize(
    ("kind", "name"),
    [("chessboard", "virtual-rig-9x6-80"), ("charuco", "virtual-rig-charuco-7x5-100")],
)
def test_the_rigs_boards_are_named_boards_calibration_detects(kind: str, name: str) -> None:
    picture = board_picture(kind)  # type: ignore[arg-type]
    board = named_board(name)
    np.testing.assert_allclose(board.object_points(), picture.corners_mm)
    rig = VirtualRig(scene="floor", board=kind, epoch_ns=0)  # type: ignore[arg-type]
    camera = rig.camera(0)
    camera.open(MODE)
    detection = detect(camera.render(0), board)
    assert detection is not None and len(detection.corners) >= 0.8 * board.corner_count


def test_a_board_filling_the_picture_is_drawn() -> None:
    # 28.3 s into the scene the ChArUco board passes close to the back camera: over 32767 of its
    # pixels lie on an edge, more samples than one cv2.remap map row takes (it raised there)
    rig = VirtualRig(scene="board", board="charuco", epoch_ns=0)
    camera = rig.camera(2)
    camera.open(MODE)
    n = 850
    truth = rig.truth(2, MODE, n)["board"]
    img = camera.render(n)
    gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(charuco()).detectBoard(gray)
    assert ids is not None and len(ids) >= 12
    error = corners.reshape(-1, 2) - truth["corners_px"][ids.ravel()]
    assert np.abs(error).max() < 1.5
    # the board covers much of the picture: the edges drawn span it
    edges = cv2.Canny(gray, 50, 150) > 0
    assert edges.sum() > 32767 // 9
