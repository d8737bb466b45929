"""One corner order across cameras for a square chessboard: seen by a camera mounted on its side,
its detection numbers the corners from another corner of the board (a quarter turn), and
``consistent_order`` renames them so every camera names each corner alike, as it does for the
half-turn of any chessboard. Pictures drawn by OpenCV through known cameras, corners found by
calibration's own detector."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from labrig.calibration.board_order import consistent_order, floor_poses
from labrig.calibration.boards import Detection, detect, parse_board
from labrig.calibration.geometry import Pose, rotation_angle_deg

Array = npt.NDArray[np.float64]
BOARD = parse_board("chessboard:7x7:25")
SIZE = (1280, 720)
K = np.array([[900.0, 0.0, 640.0], [0.0, 900.0, 360.0], [0.0, 0.0, 1.0]])
NO_DIST = np.zeros(5)
PX = 20  # picture px per square (about as many as the cameras see)
AHEAD = np.array([0.0, 0.0, 800.0])  # where the board's centre is, in the first camera's frame


def looking_at(centre: Array, rolled: bool) -> Pose:
    """World → camera for a camera at ``centre`` looking at :data:`AHEAD` (world y down), mounted
    on its side when ``rolled``."""
    z = (AHEAD - centre) / np.linalg.norm(AHEAD - centre)
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    rot = np.stack([y, -x, z]) if rolled else np.stack([x, y, z])
    return Pose(rot, -rot @ centre)


#: world → camera: the first camera, and the second 300 mm to its right, turned towards the board
#: and mounted on its side (rolled a quarter turn about its axis)
FIRST = looking_at(np.zeros(3), rolled=False)
SECOND = looking_at(np.array([300.0, -50.0, 0.0]), rolled=True)


def picture() -> tuple[npt.NDArray[np.uint8], Array]:
    """The printed board (8 x 8 squares and a white margin) and its picture px → board mm."""
    squares = np.indices((8, 8)).sum(axis=0) % 2
    raw = (np.kron(squares, np.ones((PX, PX))) * 255).astype(np.uint8)
    raw = np.pad(raw, PX, constant_values=255)
    mm = BOARD.square_mm / PX  # mm per picture px; the first inner corner is at (2 PX, 2 PX)
    to_mm = np.array([[mm, 0.0, -2 * PX * mm], [0.0, mm, -2 * PX * mm], [0.0, 0.0, 1.0]])
    return raw, to_mm


def seen(board_to_world: Pose, camera: Pose) -> npt.NDArray[np.uint8]:
    """What ``camera`` sees of the board posed ``board_to_world`` (z = 0 on the board)."""
    raw, to_mm = picture()
    pose = board_to_world.then(camera)
    h = K @ np.column_stack([pose.rotation[:, 0], pose.rotation[:, 1], pose.translation_mm])
    img = cv2.warpPerspective(raw, h @ to_mm, SIZE, flags=cv2.INTER_LINEAR, borderValue=90)
    return np.asarray(img, dtype=np.uint8)


def boards() -> list[Pose]:
    """The board 0.8 m ahead of the first camera, its centre on the axis, tilted five ways."""
    centre = np.array([3 * BOARD.square_mm, 3 * BOARD.square_mm, 0.0])
    out = []
    for rx, ry in ((0, 0), (15, 0), (-15, 10), (0, -20), (10, 15)):
        rot = Pose.of(np.radians([rx, ry, 0.0]), np.zeros(3)).rotation
        out.append(Pose(rot, AHEAD - rot @ centre))
    return out


def relative(first: Detection, second: Detection) -> Pose:
    """The second camera's pose relative to the first, from one instant's two detections."""
    poses = []
    for d in (first, second):
        ok, rvec, tvec = cv2.solvePnP(BOARD.object_points()[d.ids], d.corners, K, NO_DIST)
        assert ok
        poses.append(Pose.of(rvec, tvec))
    return poses[0].inverse().then(poses[1])


def test_a_square_board_seen_by_a_camera_on_its_side_is_numbered_alike_in_both() -> None:
    found: list[list[Detection | None]] = [[], []]
    for board in boards():
        for c, camera in enumerate((FIRST, SECOND)):
            found[c].append(detect(seen(board, camera), BOARD, f"{c}"))
    assert all(d is not None for per in found for d in per)
    truth = FIRST.inverse().then(SECOND)
    # as detected, the two cameras name the corners a quarter turn apart at some instants
    raw = [relative(a, b) for a, b in zip(found[0], found[1], strict=True)]  # type: ignore[arg-type]
    assert sum(abs(rotation_angle_deg(r.rotation, truth.rotation) - 90) < 5 for r in raw) >= 2
    ordered = consistent_order(found, BOARD, [(K, NO_DIST), (K, NO_DIST)])
    for a, b in zip(ordered[0], ordered[1], strict=True):
        assert a is not None and b is not None
        solved = relative(a, b)
        assert rotation_angle_deg(solved.rotation, truth.rotation) < 0.5
        assert np.linalg.norm(solved.centre_mm - truth.centre_mm) < 5.0  # mm, 300 mm apart


def test_the_floor_pose_of_a_square_board_agrees_across_a_camera_on_its_side() -> None:
    floor = boards()[0]  # one the two cameras number a quarter turn apart
    views = [detect(seen(floor, camera), BOARD) for camera in (FIRST, SECOND)]
    poses = floor_poses(views, BOARD, [(K, NO_DIST), (K, NO_DIST)], [FIRST, SECOND])
    assert poses[0] is not None and poses[1] is not None
    assert rotation_angle_deg(poses[0].rotation, poses[1].rotation) < 0.5
    assert np.linalg.norm(poses[0].translation_mm - poses[1].translation_mm) < 5.0
