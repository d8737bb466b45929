"""What a rig calibration must reach to be valid, and what the technician should do when it does
not: views shared between cameras, each camera's fit and coverage, and the board-length check (the
board's corners triangulated with the solved rig, measured against the board's nominal size).

Qt-free, no database, deterministic. Used by :mod:`labrig.calibration.rig`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from labrig.calibration.boards import Board, Detection
from labrig.calibration.camera import CalibrationResult, CalibrationThresholds, Reason
from labrig.calibration.geometry import Pose, normalised
from labrig.calibration.triangulation import triangulate
from labrig.errors import UsageError

Array = npt.NDArray[np.float64]
Shared = Mapping[str, Mapping[str, int]]


class JudgedCamera(Protocol):
    """What the checks read of a solved camera (:class:`labrig.calibration.rig.RigCamera`)."""

    @property
    def name(self) -> str: ...
    @property
    def intrinsics(self) -> CalibrationResult: ...
    @property
    def rms_px(self) -> float: ...
    @property
    def coverage(self) -> float: ...


@dataclass(frozen=True)
class RigThresholds:
    """What a rig calibration must reach to be valid; defaults in docs/rig-calibration.md."""

    max_rms_px: float = 1.0  # each camera's reprojection RMS under the solved poses
    min_shared_views: int = 4  # instants each camera shares with the others, in all
    min_coverage: float = 0.25  # of each camera's picture, by corners the pose solve used
    max_board_length_rms_mm: float = 2.0  # the board-length check
    max_view_error_factor: float = 2.5  # a view is dropped above this times the median ...
    view_error_floor_px: float = 0.5  # ... but never for an error below this
    max_age_days: float = 30.0  # a validated rig calibration goes stale after this
    camera: CalibrationThresholds = field(default_factory=CalibrationThresholds)

    def __post_init__(self) -> None:
        if not (self.max_rms_px > 0 and self.max_board_length_rms_mm > 0):
            raise UsageError("rig thresholds: --max-rms and --max-board-error must be positive")
        if self.min_shared_views < 1 or not 0 <= self.min_coverage <= 1:
            raise UsageError(
                "rig thresholds: --min-shared must be at least 1 and --min-coverage between 0 and 1"
            )


@dataclass(frozen=True)
class BoardLength:
    """The board measured by the rig: the distance between its two corners farthest apart, from
    every instant where two or more cameras saw them, against the nominal distance."""

    nominal_mm: float
    samples: int
    mean_mm: float
    rms_error_mm: float
    max_error_mm: float
    #: where the board was at each instant measured (the centre of its triangulated corners, mm):
    #: the part of the volume the calibration saw
    positions_mm: tuple[tuple[float, float, float], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "positions_mm": [list(p) for p in self.positions_mm],
            "nominal_mm": self.nominal_mm,
            "samples": self.samples,
            "mean_mm": self.mean_mm,
            "rms_error_mm": self.rms_error_mm,
            "max_error_mm": self.max_error_mm,
        }


@dataclass(frozen=True)
class RigChecks:
    shared: Shared  # camera → other camera → instants both saw the board
    board_length: BoardLength
    reasons: tuple[Reason, ...]


def shared_views(names: Sequence[str], mask: npt.NDArray[np.uint8]) -> dict[str, dict[str, int]]:
    """How many instants each pair of cameras both saw the board (``mask``: cameras × instants)."""
    seen = np.asarray(mask, dtype=np.int64)
    both = seen @ seen.T
    return {
        a: {b: int(both[i, j]) for j, b in enumerate(names) if j != i} for i, a in enumerate(names)
    }


def connected_groups(names: Sequence[str], shared: Shared) -> list[list[str]]:
    """The cameras in groups linked by shared views (one group: every pose can be solved)."""
    left, groups = list(names), []
    while left:
        group, todo = [], [left.pop(0)]
        while todo:
            cam = todo.pop()
            group.append(cam)
            for other in [o for o in left if shared[cam][o] > 0]:
                left.remove(other)
                todo.append(other)
        groups.append(sorted(group, key=list(names).index))
    return groups


def _farthest_pair(board: Board, ids: npt.NDArray[np.int64]) -> tuple[int, int, float]:
    obj = board.object_points()[ids]
    d = np.linalg.norm(obj[:, None, :] - obj[None, :, :], axis=2)
    i, j = np.unravel_index(int(np.argmax(d)), d.shape)
    return int(ids[i]), int(ids[j]), float(d[i, j])


def board_length_check(
    board: Board,
    detections: Sequence[Sequence[Detection | None]],
    lenses: Sequence[tuple[Array, Array]],
    poses: Sequence[Pose],
) -> BoardLength:
    """Triangulate the board's corners at every instant two or more cameras saw it and measure the
    two corners farthest apart (``detections``: cameras × instants)."""
    n_points = board.corner_count
    full_a, full_b, nominal = _farthest_pair(board, np.arange(n_points, dtype=np.int64))
    measured, expected, positions = [], [], []
    for k in range(len(detections[0]) if detections else 0):
        views, ids_seen = [], []
        for c, per in enumerate(detections):
            pts = np.full((n_points, 2), np.nan)
            d = per[k]
            if d is not None:
                pts[d.ids] = normalised(d.corners, *lenses[c])
                ids_seen.append(d.ids)
            views.append(pts)
        if len(ids_seen) < 2:
            continue
        world = triangulate(views, poses)
        ok = np.flatnonzero(np.isfinite(world).all(axis=1)).astype(np.int64)
        if len(ok) < 2:
            continue
        a, b, length = (
            (full_a, full_b, nominal)
            if full_a in ok and full_b in ok
            else _farthest_pair(board, ok)
        )
        measured.append(float(np.linalg.norm(world[a] - world[b])))
        expected.append(length)
        centre = world[ok].mean(axis=0)
        positions.append((float(centre[0]), float(centre[1]), float(centre[2])))
    if not measured:
        return BoardLength(nominal, 0, float("nan"), float("nan"), float("nan"))
    err = np.asarray(measured) - np.asarray(expected)
    return BoardLength(
        nominal_mm=nominal,
        samples=len(measured),
        mean_mm=float(np.mean(measured)),
        rms_error_mm=float(np.sqrt(np.mean(err**2))),
        max_error_mm=float(np.max(np.abs(err))),
        positions_mm=tuple(positions),
    )


def _best_partner(name: str, shared: Shared) -> str:
    others = shared[name]
    return max(others, key=lambda o: (others[o], -list(others).index(o)))


def judge(
    cameras: Sequence[JudgedCamera],
    shared: Shared,
    length: BoardLength,
    t: RigThresholds,
    board: Board,
) -> RigChecks:
    """Every threshold the calibration fails, each saying what to do."""
    reasons: list[Reason] = []
    for cam in cameras:
        for r in cam.intrinsics.reasons:
            reasons.append(Reason(r.code, f"camera {cam.name}: {r.message}"))
    for cam in cameras:
        together = sum(shared[cam.name].values())
        if together < t.min_shared_views:
            partner = _best_partner(cam.name, shared)
            reasons.append(
                Reason(
                    "LABRIG_RIG_FEW_SHARED_VIEWS",
                    f"camera {cam.name} saw the board at the same instant as another camera only "
                    f"{together} times ({t.min_shared_views} needed): hold the board where "
                    f"cameras {cam.name} and {partner} both see it whole, at several places",
                )
            )
        if cam.rms_px > t.max_rms_px:
            reasons.append(
                Reason(
                    "LABRIG_RIG_RMS_TOO_HIGH",
                    f"camera {cam.name}'s views fit the solved rig with an RMS of "
                    f"{cam.rms_px:.3f} px, above {t.max_rms_px:g} px: check that it did not move "
                    "during the recording, its focus, and that its frames are in sync with the "
                    "others",
                )
            )
        if cam.coverage < t.min_coverage:
            reasons.append(
                Reason(
                    "LABRIG_RIG_COVERAGE_TOO_LOW",
                    f"the views camera {cam.name} shares cover {cam.coverage:.0%} of its picture "
                    f"({t.min_coverage:.0%} needed): carry the board nearer the edges of camera "
                    f"{cam.name}'s view, where another camera sees it too",
                )
            )
    if length.samples == 0:
        reasons.append(
            Reason(
                "LABRIG_RIG_BOARD_LENGTH_UNCHECKED",
                "no instant had the board's corners seen by two cameras, so the rig's scale "
                "could not be checked: hold the board where two cameras both see it",
            )
        )
    elif length.rms_error_mm > t.max_board_length_rms_mm:
        reasons.append(
            Reason(
                "LABRIG_RIG_BOARD_LENGTH",
                f"the rig measures the board's {length.nominal_mm:.1f} mm diagonal as "
                f"{length.mean_mm:.1f} mm on average (error RMS {length.rms_error_mm:.2f} mm, "
                f"{t.max_board_length_rms_mm:g} mm allowed): check that the board chosen "
                f"({board.describe()}) matches the printed board and that it is flat, then "
                "calibrate again",
            )
        )
    return RigChecks(shared, length, tuple(reasons))
