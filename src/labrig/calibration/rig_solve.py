"""The solving steps of a rig calibration (:mod:`labrig.calibration.rig`): finding the board in
each camera's views, the poses of all cameras together (``cv2.calibrateMultiviewExtended``, the
intrinsics fixed, with one round of dropping views far above the others), and the move to the
floor board's axes. Qt-free, no database, deterministic for the same inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from labrig.calibration.boards import Board, Detection, detect
from labrig.calibration.camera import (
    CalibrationResult,
    DegenerateViewsError,
    ImageSizeMismatchError,
    View,
    error_limit,
)
from labrig.calibration.geometry import Pose, mean_rotation
from labrig.calibration.rig_checks import RigThresholds, connected_groups, shared_views
from labrig.errors import LabrigError
from labrig.tasks import Task

M_PER_MM = 1e-3  # cv2.calibrateMultiview wants the board in metres (docs: ECOSYSTEM.md)
_CRITERIA = (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 200, 1e-7)
#: the floor board's axes → world axes: x kept, y and z turned over, so z points up out of the
#: printed side (a board lying face up has its own z pointing into the floor)
FLOOR_TO_WORLD = np.diag([1.0, -1.0, -1.0])
Array = npt.NDArray[np.float64]


class FloorNotSeenError(LabrigError):
    code = "LABRIG_RIG_FLOOR_NOT_SEEN"


@dataclass
class Observed:
    name: str
    size: tuple[int, int]
    detections: list[Detection | None]  # per instant
    floor: Detection | None


def observe(
    name: str, views: Sequence[View], floor_view: View | None, board: Board, task: Task
) -> Observed:
    """Find the board in one camera's views and floor view, checking that their sizes agree."""
    size: tuple[int, int] | None = None
    found: list[Detection | None] = []
    for k, view in enumerate(views):
        task.check_cancelled()
        shape = (view.image.shape[1], view.image.shape[0])
        if size is not None and shape != size:
            raise ImageSizeMismatchError(
                f"camera {name}: {view.name} is {shape[0]}x{shape[1]} but its views before it "
                f"are {size[0]}x{size[1]}; give each camera's views in one mode"
            )
        size = shape
        found.append(detect(view.image, board, f"{name}#{k}"))
    assert size is not None
    floor = None
    if floor_view is not None:
        shape = (floor_view.image.shape[1], floor_view.image.shape[0])
        if shape != size:
            raise ImageSizeMismatchError(
                f"camera {name}: the floor view {floor_view.name} is {shape[0]}x{shape[1]} but "
                f"its views are {size[0]}x{size[1]}; take it in the same mode"
            )
        floor = detect(floor_view.image, board, f"{name}#floor")
    return Observed(name, size, found, floor)


def multiview(
    observed: Sequence[Observed],
    intrinsics: Sequence[CalibrationResult],
    board: Board,
    mask: npt.NDArray[np.uint8],
) -> tuple[list[Pose], Array]:
    """One ``cv2.calibrateMultiviewExtended`` with the intrinsics fixed: poses relative to the
    first camera (mm) and each view's RMS error (cameras × instants, NaN where not used)."""
    n_points = board.corner_count
    obj = (board.object_points() * M_PER_MM).astype(np.float32)
    image_points = []
    for c, ob in enumerate(observed):
        per = []
        for k, d in enumerate(ob.detections):
            pts = np.full((n_points, 2), -1.0, np.float32)
            if d is not None and mask[c, k]:
                pts[d.ids] = d.corners.astype(np.float32)
            per.append(pts.reshape(-1, 1, 2))
        image_points.append(per)
    cams = len(observed)
    ks = [np.asarray(i.camera_matrix, np.float64) for i in intrinsics]
    dists = [np.asarray(i.dist, np.float64).reshape(1, -1) for i in intrinsics]
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)  # summed in a fixed order: the same views give the same digits
    try:
        _, _, _, rs, ts, _, _, _, per_frame = cv2.calibrateMultiviewExtended(
            [obj] * mask.shape[1],
            image_points,
            [ob.size for ob in observed],
            mask,
            np.zeros((cams, 1), np.uint8),  # CALIB_MODEL_PINHOLE
            ks,
            dists,
            [np.zeros((3, 1)) for _ in range(cams)],
            [np.zeros((3, 1)) for _ in range(cams)],
            flags=cv2.CALIB_USE_INTRINSIC_GUESS,
            criteria=_CRITERIA,
        )
    except cv2.error as exc:
        raise DegenerateViewsError(
            f"the views do not fix the cameras' poses (OpenCV: {getattr(exc, 'err', exc)}); move "
            "and turn the board through the volume, tilting it between views"
        ) from None
    finally:
        cv2.setNumThreads(threads)
    poses = []
    for r, tv in zip(rs, ts, strict=True):
        r = np.asarray(r, dtype=np.float64)
        rot = r if r.shape == (3, 3) else cv2.Rodrigues(r.reshape(3, 1))[0]
        poses.append(Pose(np.asarray(rot), np.asarray(tv, np.float64).reshape(3) / M_PER_MM))
    if not all(np.isfinite(p.matrix()).all() for p in poses):
        raise DegenerateViewsError(
            "the pose solve diverged: the views are too alike; move and tilt the board more"
        )
    errors = np.asarray(per_frame, dtype=np.float64).reshape(cams, -1)
    errors = np.where((mask > 0) & (errors >= 0), errors, np.nan)
    return poses, errors


def solve_poses(
    observed: Sequence[Observed],
    intrinsics: Sequence[CalibrationResult],
    board: Board,
    mask: npt.NDArray[np.uint8],
    t: RigThresholds,
) -> tuple[list[Pose], Array, npt.NDArray[np.bool_], float]:
    """Solve, drop the views far above the median error (never leaving a camera without views
    shared with the others), solve again once. Also returns the error limit applied (px)."""
    poses, errors = multiview(observed, intrinsics, board, mask)
    used = mask > 0
    limit = error_limit(errors[used], t.max_view_error_factor, t.view_error_floor_px)
    worse = used & (np.nan_to_num(errors, nan=0.0) > limit)
    if worse.any():
        kept = (used & ~worse).astype(np.uint8)
        kept_names = [ob.name for ob in observed]
        if len(connected_groups(kept_names, shared_views(kept_names, kept))) == 1:
            poses2, errors2 = multiview(observed, intrinsics, board, kept)
            return poses2, np.where(kept > 0, errors2, errors), kept > 0, limit
    return poses, errors, used, limit


def to_floor(
    poses: Sequence[Pose], names: Sequence[str], floors: Sequence[Pose | None]
) -> tuple[list[Pose], tuple[str, ...]]:
    """The poses re-expressed in the floor board's axes (see the module's docstring): each camera
    that saw the floor gave the floor's pose in the first camera's frame
    (:func:`labrig.calibration.board_order.floor_poses`); they are averaged."""
    seen = [(name, floor) for name, floor in zip(names, floors, strict=True) if floor is not None]
    if not seen:
        raise FloorNotSeenError(
            "the floor board's pose could not be solved in any camera; lay it flat and fully in "
            "view, and take the floor views again"
        )
    board_to_first = Pose(
        mean_rotation([f.rotation for _, f in seen]),
        np.mean([f.translation_mm for _, f in seen], axis=0),
    )
    # world → board: x_board = FLOOR_TO_WORLD.T @ x_world (the matrix is its own inverse)
    world_to_board = Pose(FLOOR_TO_WORLD.T.copy(), np.zeros(3))
    world_to_first = world_to_board.then(board_to_first)
    return [world_to_first.then(p) for p in poses], tuple(name for name, _ in seen)
