"""Rig calibration: every camera's intrinsics and pose, in one set of axes, from views of a board
taken at the same instants.

Input: per camera, its views in order (the k-th view of every camera taken at the same instant),
and optionally a view of the board lying on the floor. Each camera's intrinsics come from the
single-camera solve (:func:`labrig.calibration.camera.calibrate`, with its outlier rejection) on
that camera's views, unless a valid single-camera calibration is given for it. The poses of all
cameras are then solved together by OpenCV's multi-view calibration
(``cv2.calibrateMultiviewExtended``); instants whose error is far above the others are dropped.
Each solved lens is then refined against the rig (the board where the other cameras put it fixes
the focal length that a camera's own far views leave loose; a given calibration is kept) and the
poses solved again with the refined lenses (:func:`labrig.calibration.rig_solve.solve_poses`).
A floor view sets the world's origin and axes (origin at the board's
first corner, x along its first row of corners, z up out of the printed side, so the floor is
z = 0); without one the first camera is the origin (its x right, y down, z ahead).

The judgement (thresholds, the board-length check, what to do) is in
:mod:`labrig.calibration.rig_checks`. Qt-free, no database, deterministic for the same inputs.
Documented in ``docs/rig-calibration.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from labrig.calibration.board_order import consistent_order, floor_poses
from labrig.calibration.boards import Board
from labrig.calibration.camera import (
    COVERAGE_GRID,
    BoardNotFoundError,
    CalibrationResult,
    ImageSizeMismatchError,
    View,
    calibrate,
    coverage_counts,
    stored_corners,
)
from labrig.calibration.geometry import Pose, angle_deg
from labrig.calibration.rig_checks import (
    RigChecks,
    RigThresholds,
    board_length_check,
    connected_groups,
    judge,
    shared_views,
)
from labrig.calibration.rig_solve import (
    FloorNotSeenError,
    Observed,
    observe,
    solve_poses,
    to_floor,
)
from labrig.errors import LabrigError, UsageError
from labrig.tasks import UNTRACKED, Share, Task

SCHEMA = "labrig.rig-calibration/1"
Array = npt.NDArray[np.float64]


class RigViewCountError(LabrigError):
    code = "LABRIG_RIG_VIEW_COUNT_MISMATCH"


class RigBoardNotSeenError(LabrigError):
    code = "LABRIG_RIG_BOARD_NOT_SEEN"


class RigNotConnectedError(LabrigError):
    code = "LABRIG_RIG_NOT_CONNECTED"


@dataclass(frozen=True)
class RigCameraViews:
    """One camera's input: its name (e.g. the rig's role ``front``), its views in instant order,
    and a valid single-camera calibration to use as its intrinsics (None: solved from ``views``)."""

    name: str
    views: Sequence[View]
    intrinsics: CalibrationResult | None = None
    floor: View | None = None


@dataclass(frozen=True)
class RigCamera:
    """One camera as solved: intrinsics, pose in the world, and how well the views fit."""

    name: str
    intrinsics: CalibrationResult
    pose: Pose
    rms_px: float  # reprojection RMS over the instants the pose solve used
    view_errors: tuple[tuple[int, float], ...]  # (instant, RMS px) of the views used
    rejected: tuple[tuple[int, float, float], ...]  # (instant, error px, limit px)
    coverage: float  # of the COVERAGE_GRID cells, holding a corner used by the pose solve
    coverage_counts: npt.NDArray[np.int64]
    detected: tuple[int, ...]  # the instants where the board was found

    def to_json(self) -> dict[str, Any]:
        k, d = self.intrinsics.camera_matrix, self.intrinsics.dist
        return {
            "name": self.name,
            "image_size": list(self.intrinsics.image_size),
            "camera_matrix": k.tolist(),
            "fx": float(k[0, 0]),
            "fy": float(k[1, 1]),
            "cx": float(k[0, 2]),
            "cy": float(k[1, 2]),
            "distortion": dict(zip(("k1", "k2", "p1", "p2", "k3"), d.tolist(), strict=True)),
            "intrinsics_rms_px": self.intrinsics.rms_px,
            "intrinsics_id": self.intrinsics.digest(),
            "intrinsics_valid": self.intrinsics.valid,
            "rms_px": self.rms_px,
            "rotation_vector_rad": [float(v) for v in self.pose.rvec],
            "translation_mm": [float(v) for v in self.pose.translation_mm],
            "centre_mm": [float(v) for v in self.pose.centre_mm],
            "optical_axis": [float(v) for v in self.pose.axis],
            "views": [{"instant": i, "error_px": e} for i, e in self.view_errors],
            "rejected": [
                {"instant": i, "error_px": e, "limit_px": lim} for i, e, lim in self.rejected
            ],
            "detected": list(self.detected),
            "coverage": self.coverage,
            "coverage_grid": list(COVERAGE_GRID),
            "coverage_counts": self.coverage_counts.tolist(),
        }


@dataclass(frozen=True)
class RigCalibration:
    board: Board
    cameras: tuple[RigCamera, ...]
    instants: int  # views per camera given
    world: str  # "floor" (the floor board) or "first camera"
    floor_cameras: tuple[str, ...]  # the cameras that saw the floor board
    checks: RigChecks
    thresholds: RigThresholds
    rms_px: float  # over every camera
    solve_seconds: float = field(default=0.0, compare=False)

    @property
    def valid(self) -> bool:
        return not self.checks.reasons

    def camera(self, name: str) -> RigCamera:
        for cam in self.cameras:
            if cam.name == name:
                return cam
        raise KeyError(name)

    def pairs(self) -> list[dict[str, Any]]:
        """Every pair of cameras: the distance between their optical centres and the angle between
        their optical axes."""
        out = []
        for i, a in enumerate(self.cameras):
            for b in self.cameras[i + 1 :]:
                out.append(
                    {
                        "cameras": [a.name, b.name],
                        "distance_mm": float(np.linalg.norm(a.pose.centre_mm - b.pose.centre_mm)),
                        "angle_deg": angle_deg(a.pose.axis, b.pose.axis),
                        "shared_views": self.checks.shared[a.name][b.name],
                    }
                )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "board": self.board.to_json(),
            "instants": self.instants,
            "world": self.world,
            "floor_cameras": list(self.floor_cameras),
            "rms_px": self.rms_px,
            "cameras": [c.to_json() for c in self.cameras],
            "pairs": self.pairs(),
            "board_length": self.checks.board_length.to_json(),
            "thresholds": asdict(self.thresholds),
            "valid": self.valid,
            "reasons": [asdict(r) for r in self.checks.reasons],
            "opencv": cv2.__version__,
        }

    def digest(self) -> str:
        """SHA-256 of the canonical JSON document: the rig calibration's id."""
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()


def _check_inputs(cameras: Sequence[RigCameraViews]) -> None:
    if len(cameras) < 2:
        raise UsageError("a rig calibration needs at least two cameras (--camera NAME FILE… twice)")
    names = [c.name for c in cameras]
    if len(set(names)) != len(names):
        raise UsageError(f"camera names must differ: {', '.join(names)}")
    counts = {c.name: len(c.views) for c in cameras}
    if len(set(counts.values())) != 1:
        listed = ", ".join(f"{n}: {k}" for n, k in counts.items())
        raise RigViewCountError(
            f"the cameras have different numbers of views ({listed}); the k-th view of every "
            "camera must be taken at the same instant, so give each camera one view per instant"
        )
    if not next(iter(counts.values())):
        raise UsageError("give each camera at least one view")


def calibrate_rig(
    cameras: Sequence[RigCameraViews],
    board: Board,
    thresholds: RigThresholds | None = None,
    task: Task = UNTRACKED,
) -> RigCalibration:
    """Find the board in every view, solve each camera's intrinsics (unless given) and then all
    the poses together, and judge the result. Raises a typed refusal for input that cannot give a
    rig calibration at all (see the module's errors); nothing is stored here."""
    _check_inputs(cameras)
    observed = observe_rig(cameras, board, Share(task, 0.0, 0.8))
    return solve_rig(cameras, observed, board, thresholds, Share(task, 0.8, 1.0))


def observe_rig(
    cameras: Sequence[RigCameraViews], board: Board, task: Task = UNTRACKED
) -> list[Observed]:
    """The board found in every camera's views (and floor view): the slow half of a rig
    calibration, apart so the same detections can be solved again (the benchmark). The cameras
    are searched side by side, one thread each up to the machine's cores (OpenCV lets go of the
    GIL while it decodes and searches); progress and cancel are looked at between cameras."""
    _check_inputs(cameras)
    workers = max(1, min(len(cameras), os.cpu_count() or 1))
    task.progress(0.0, f"finding the board in {len(cameras)} cameras' views")
    with ThreadPoolExecutor(workers, thread_name_prefix="labrig-board") as pool:
        futures = [
            pool.submit(observe, cam.name, cam.views, cam.floor, board, UNTRACKED)
            for cam in cameras
        ]
        for done, _ in enumerate(as_completed(futures), start=1):
            if task.cancelled:
                for f in futures:
                    f.cancel()
                task.check_cancelled()
            task.progress(done / len(cameras), f"board found in {done} of {len(cameras)} cameras")
        return [f.result() for f in futures]


def solve_rig(
    cameras: Sequence[RigCameraViews],
    observed: Sequence[Observed],
    board: Board,
    thresholds: RigThresholds | None = None,
    task: Task = UNTRACKED,
) -> RigCalibration:
    """The rig solved from ``observed`` (:func:`observe_rig` of ``cameras``): refusals, each
    camera's lens, the poses together, the checks."""
    t = thresholds or RigThresholds()
    observed = [replace(ob) for ob in observed]  # its detections are put in order below
    for ob in observed:
        if not any(d is not None for d in ob.detections):
            raise RigBoardNotSeenError(
                f"the {board.describe()} was not found in any of camera {ob.name}'s "
                f"{len(ob.detections)} views; check that it is the board chosen and that camera "
                f"{ob.name} sees it whole, sharp and well lit in some of them"
            )
    mask = np.array([[d is not None for d in ob.detections] for ob in observed], dtype=np.uint8)
    names = [ob.name for ob in observed]
    shared = shared_views(names, mask)
    groups = connected_groups(names, shared)
    if len(groups) > 1:
        listed = "; ".join(", ".join(g) for g in groups)
        raise RigNotConnectedError(
            f"no view links these groups of cameras: {listed}; hold the board where a camera of "
            "one group and a camera of another both see it whole, at the same instant"
        )
    if any(c.floor is not None for c in cameras) and not any(ob.floor for ob in observed):
        raise FloorNotSeenError(
            f"the floor board ({board.describe()}) was not found in any camera's floor view; lay "
            "it flat where at least one camera sees it whole, and take the floor views again"
        )
    task.progress(0.0, "solving each camera's lens")
    intrinsics = []
    for cam, ob in zip(cameras, observed, strict=True):
        if cam.intrinsics is not None:
            if cam.intrinsics.image_size != ob.size:
                raise ImageSizeMismatchError(
                    f"camera {cam.name}'s calibration is for "
                    f"{cam.intrinsics.image_size[0]}x{cam.intrinsics.image_size[1]} but its views "
                    f"are {ob.size[0]}x{ob.size[1]}; use a calibration made in the same mode"
                )
            intrinsics.append(cam.intrinsics)
            continue
        found = [d for d in ob.detections if d is not None]
        try:
            intrinsics.append(calibrate(found, ob.size, board, t.camera))
        except LabrigError as exc:
            raise type(exc)(f"camera {cam.name}: {exc.message}", code=exc.code) from None
    task.progress(0.5, "solving the cameras' poses together")
    lenses = [(i.camera_matrix, i.dist) for i in intrinsics]
    for ob, ordered in zip(
        observed, consistent_order([ob.detections for ob in observed], board, lenses), strict=True
    ):
        ob.detections = ordered
    started = time.perf_counter()
    given = [cam.intrinsics is not None for cam in cameras]
    poses, errors, used, limit, lenses = solve_poses(observed, lenses, board, mask, t, given)
    seconds = time.perf_counter() - started
    # the lenses as refined against the rig (a given calibration is kept as it is)
    intrinsics = [
        intr if fixed else replace(intr, camera_matrix=lens[0], dist=lens[1])
        for intr, lens, fixed in zip(intrinsics, lenses, given, strict=True)
    ]
    world = "first camera"
    floor_names: tuple[str, ...] = ()
    if any(ob.floor is not None for ob in observed):
        floors = floor_poses([ob.floor for ob in observed], board, lenses, poses)
        poses, floor_names = to_floor(poses, names, floors)
        world = "floor"
    rig_cameras = []
    for c, (ob, intr) in enumerate(zip(observed, intrinsics, strict=True)):
        used_k = [k for k in range(mask.shape[1]) if used[c, k]]
        view_errors = tuple((k, float(errors[c, k])) for k in used_k)
        rejected = tuple(
            (k, float(errors[c, k]), limit)
            for k in range(mask.shape[1])
            if mask[c, k] and not used[c, k]
        )
        corners = [stored_corners(d) for k, d in enumerate(ob.detections) if d and used[c, k]]
        counts = coverage_counts(np.concatenate(corners) if corners else np.zeros((0, 2)), ob.size)
        rig_cameras.append(
            RigCamera(
                name=ob.name,
                intrinsics=intr,
                pose=poses[c],
                rms_px=_rms([e for _, e in view_errors]),
                view_errors=view_errors,
                rejected=rejected,
                coverage=int(np.count_nonzero(counts)) / counts.size,
                coverage_counts=counts,
                detected=tuple(k for k in range(mask.shape[1]) if mask[c, k]),
            )
        )
    # the views the pose solve kept: one it dropped as not fitting would be measured too
    kept = [
        [d if used[c, k] else None for k, d in enumerate(ob.detections)]
        for c, ob in enumerate(observed)
    ]
    length = board_length_check(board, kept, lenses, poses)
    checks = judge(rig_cameras, shared, length, t, board)
    task.progress(1.0, "solved")
    return RigCalibration(
        board=board,
        cameras=tuple(rig_cameras),
        instants=mask.shape[1],
        world=world,
        floor_cameras=floor_names,
        checks=checks,
        thresholds=t,
        rms_px=_rms([e for rc in rig_cameras for _, e in rc.view_errors]),
        solve_seconds=seconds,
    )


def _rms(errors: Sequence[float]) -> float:
    return float(np.sqrt(np.mean(np.square(errors)))) if errors else float("nan")


def parse_floor(items: Sequence[str]) -> Mapping[str, str]:
    """``NAME=FILE`` items of ``--floor`` as a name → file mapping."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise UsageError(
                f"--floor takes NAME=FILE (a camera's name and its floor view), not {item!r}"
            )
        out[name] = path
    return out


__all__ = [
    "BoardNotFoundError",
    "FloorNotSeenError",
    "RigBoardNotSeenError",
    "RigCalibration",
    "RigCamera",
    "RigCameraViews",
    "RigNotConnectedError",
    "RigViewCountError",
    "calibrate_rig",
    "parse_floor",
]
