"""The solving steps of a rig calibration (:mod:`labrig.calibration.rig`): finding the board in
each camera's views, the poses of all cameras together (``cv2.calibrateMultiviewExtended``, with
one round of dropping views far above the others), the lenses refined against the rig, and the
move to the floor board's axes. Qt-free, no database, deterministic for the same inputs.

``cv2.calibrateMultiviewExtended`` never changes the lenses it is given: its joint least squares
is over the poses only (OpenCV 5.1's ``multiview_calibration.cpp``; without
``CALIB_USE_INTRINSIC_GUESS`` it runs ``calibrateCamera`` on each camera alone, as the
single-camera solve does). A lens solved from its own views alone is loosely fixed when the board
is metres away (its focal length trades against the board's distance), so :func:`refine_lenses`
alternates the two OpenCV solves: the poses with the lenses fixed, then each camera's lens by
``cv2.calibrateCamera`` with the board where the rig puts it at the instants other cameras saw it
too (those views as one fixed, non-planar set of points; its own other views as usual).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from labrig.calibration.boards import Board, Detection, detect
from labrig.calibration.camera import FLAGS as LENS_FLAGS
from labrig.calibration.camera import (
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
_LENS_CRITERIA = (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 100, 1e-9)
# the pose solves between lens rounds: looser (the rounds go on; the last solve uses _CRITERIA)
_ROUND_CRITERIA = (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 20, 1e-5)
#: rounds of :func:`refine_lenses`, and how far each lens moves past its round's solution (1: to
#: it): the rig pulls a lens only part of the way each round, so the step is overrelaxed
LENS_ROUNDS = 8
LENS_STEP = 2.0
Lens = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]  # camera matrix, k1 k2 p1 p2 k3
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
    lenses: Sequence[Lens],
    board: Board,
    mask: npt.NDArray[np.uint8],
    criteria: tuple[int, int, float] = _CRITERIA,
) -> tuple[list[Pose], Array, dict[int, Pose]]:
    """One ``cv2.calibrateMultiviewExtended`` with the lenses fixed: poses relative to the first
    camera (mm), each view's RMS error (cameras × instants, NaN where not used) and the board's
    pose in the first camera's frame at each instant used (board → first camera, mm)."""
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
    ks = [np.asarray(k, np.float64) for k, _ in lenses]
    dists = [np.asarray(d, np.float64).reshape(1, -1) for _, d in lenses]
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)  # summed in a fixed order: the same views give the same digits
    try:
        _, _, _, rs, ts, _, rvecs0, tvecs0, per_frame = cv2.calibrateMultiviewExtended(
            [obj] * mask.shape[1],
            image_points,
            [ob.size for ob in observed],
            mask,
            np.zeros((cams, 1), np.uint8),  # CALIB_MODEL_PINHOLE
            ks,
            dists,
            [np.zeros((3, 1)) for _ in range(cams)],
            [np.zeros((3, 1)) for _ in range(cams)],
            flags=cv2.CALIB_USE_INTRINSIC_GUESS,  # use (and keep) the lenses given
            criteria=criteria,
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
    boards = {
        k: Pose.of(rvecs0[k], np.asarray(tvecs0[k], np.float64).reshape(3) / M_PER_MM)
        for k in range(mask.shape[1])
        if mask[:, k].any() and np.asarray(rvecs0[k]).size == 3
    }
    errors = np.asarray(per_frame, dtype=np.float64).reshape(cams, -1)
    errors = np.where((mask > 0) & (errors >= 0), errors, np.nan)
    return poses, errors, boards


def refine_lenses(
    observed: Sequence[Observed],
    lenses: Sequence[Lens],
    board: Board,
    mask: npt.NDArray[np.uint8],
    fixed: Sequence[bool],
) -> list[Lens]:
    """Each camera's lens refined against the rig (the module's docstring), over ``mask``'s views;
    the lenses ``fixed`` are kept. Each of :data:`LENS_ROUNDS` rounds solves the poses
    (:func:`multiview`, over the instants two or more cameras saw: an instant one camera saw does
    not move them), then for each camera ``cv2.calibrateCamera`` (the single-camera solve's lens
    model, :data:`labrig.calibration.camera.FLAGS`, starting from its lens) on the
    board corners of its shared instants placed by the rig, in the first camera's frame, as one
    view, and on each of its other views. Deterministic for the same inputs."""
    out = [
        (np.asarray(k, np.float64).copy(), np.asarray(d, np.float64).ravel()[:5].copy())
        for k, d in lenses
    ]
    shared = mask.sum(axis=0) >= 2
    shared_mask = (mask * shared[None, :]).astype(np.uint8)
    obj = board.object_points()
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        for _ in range(LENS_ROUNDS):
            _, _, boards = multiview(observed, out, board, shared_mask, _ROUND_CRITERIA)
            for c, ob in enumerate(observed):
                if fixed[c]:
                    continue
                placed_obj, placed_img = [], []
                objs, imgs = [], []
                for k, d in enumerate(ob.detections):
                    if d is None or not mask[c, k]:
                        continue
                    if shared[k] and k in boards:
                        b = boards[k]
                        placed_obj.append(obj[d.ids] @ b.rotation.T + b.translation_mm)
                        placed_img.append(d.corners)
                    else:
                        objs.append(obj[d.ids].astype(np.float32))
                        imgs.append(d.corners.astype(np.float32).reshape(-1, 1, 2))
                if not placed_obj:
                    continue
                # in metres, as the poses are solved
                objs.insert(0, (np.concatenate(placed_obj) * M_PER_MM).astype(np.float32))
                imgs.insert(0, np.concatenate(placed_img).astype(np.float32).reshape(-1, 1, 2))
                k0, d0 = out[c]
                _, k1, d1, _, _ = cv2.calibrateCamera(
                    objs,
                    imgs,
                    ob.size,
                    k0.copy(),
                    d0.copy(),
                    flags=LENS_FLAGS | cv2.CALIB_USE_INTRINSIC_GUESS,
                    criteria=_LENS_CRITERIA,
                )
                k1, d1 = np.asarray(k1, np.float64), np.asarray(d1, np.float64).ravel()[:5]
                if not (np.isfinite(k1).all() and np.isfinite(d1).all()):
                    continue
                out[c] = (k0 + LENS_STEP * (k1 - k0), d0 + LENS_STEP * (d1 - d0))
    finally:
        cv2.setNumThreads(threads)
    return out


def solve_poses(
    observed: Sequence[Observed],
    lenses: Sequence[Lens],
    board: Board,
    mask: npt.NDArray[np.uint8],
    t: RigThresholds,
    fixed: Sequence[bool] | None = None,
) -> tuple[list[Pose], Array, npt.NDArray[np.bool_], float, list[Lens]]:
    """Solve, drop the views far above the median error (never leaving a camera without views
    shared with the others), refine the lenses on the views kept (:func:`refine_lenses`; the
    lenses ``fixed`` are kept as given) and solve the poses once more with them. Also returns the
    error limit applied (px) and the lenses."""
    _, errors, _ = multiview(observed, lenses, board, mask)
    used = mask > 0
    limit = error_limit(errors[used], t.max_view_error_factor, t.view_error_floor_px)
    worse = used & (np.nan_to_num(errors, nan=0.0) > limit)
    if worse.any():
        kept = (used & ~worse).astype(np.uint8)
        kept_names = [ob.name for ob in observed]
        if len(connected_groups(kept_names, shared_views(kept_names, kept))) == 1:
            used = kept > 0
    fixed = fixed if fixed is not None else [False] * len(observed)
    refined = refine_lenses(observed, lenses, board, used.astype(np.uint8), fixed)
    poses2, errors2, _ = multiview(observed, refined, board, used.astype(np.uint8))
    return poses2, np.where(used, errors2, errors), used, limit, refined


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
