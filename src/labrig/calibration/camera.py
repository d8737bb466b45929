"""Camera calibration from views of a known board: intrinsics, distortion, quality metrics
and metric scale.

:mod:`labrig.calibration.images` reads the views from image and video files; :func:`detect` finds
the board in each; :func:`calibrate` solves ``cv2.calibrateCamera``, drops views whose reprojection
error is far above the others and solves again, then judges the result against
:class:`CalibrationThresholds`. The result keeps every view's detected corners, so where they fell
(:func:`coverage_counts`) can be shown afterwards. The metric scale from a board lying on the
measurement plane is in :mod:`labrig.calibration.plane`. Documented in ``docs/calibration.md``.

Qt-free, no database, deterministic for the same inputs; every function may run on any thread. The
solve sets OpenCV's thread count to 1 for its few milliseconds (process-wide: other OpenCV calls
then run single-threaded).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from labrig.calibration.boards import Board, Detection, detect
from labrig.errors import LabrigError, UsageError
from labrig.tasks import UNTRACKED, Share, Task

__all__ = [
    "Board",
    "CalibrationResult",
    "CalibrationThresholds",
    "CaptureSource",
    "Detection",
    "calibrate",
    "coverage_counts",
    "detect",
]
# /1, before corners and source were kept, is still read (calibration_views)
SCHEMA = "labrig.calibration/2"
# cells across and down; coverage is the fraction holding at least one detected corner
COVERAGE_GRID = (8, 6)
# stored corners are rounded to 1/1000 px, so the document (and its digest) is deterministic
CORNER_DECIMALS = 3
FLAGS = cv2.CALIB_FIX_K3  # k1, k2, p1, p2: a free k3 chases noise on ordinary (non-fisheye) lenses
_CRITERIA = (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 100, 1e-9)
_MAX_ROUNDS = 3  # rejection rounds; one nearly always suffices
Array = npt.NDArray[np.float64]
Counts = npt.NDArray[np.int64]


class BoardNotFoundError(LabrigError):
    code = "LABRIG_BOARD_NOT_FOUND"


class TooFewViewsError(LabrigError):
    code = "LABRIG_TOO_FEW_VIEWS"


class DegenerateViewsError(LabrigError):
    code = "LABRIG_DEGENERATE_VIEWS"


class ImageSizeMismatchError(LabrigError):
    code = "LABRIG_IMAGE_SIZE_MISMATCH"


class CalibrationNotValidError(LabrigError):
    code = "LABRIG_CALIBRATION_NOT_VALID"


@dataclass(frozen=True)
class View:
    name: str  # file name, or ``video.avi#frame``
    image: npt.NDArray[np.uint8]


@dataclass(frozen=True)
class CalibrationThresholds:
    """What a calibration must reach to be valid; defaults tuned on the virtual camera
    (docs/calibration.md)."""

    max_rms_px: float = 1.0  # overall RMS reprojection error
    min_views: int = 8  # views with the board: fewer are refused, and rejection never leaves fewer
    min_coverage: float = 0.4  # fraction of the COVERAGE_GRID cells holding a detected corner
    # a view is rejected above this many times the median view error ...
    max_view_error_factor: float = 2.5
    view_error_floor_px: float = 0.5  # ... but never for an error below this
    min_pose_spread_deg: float = 10.0  # largest angle between two views' board normals
    max_focal_uncertainty: float = 0.01  # standard deviation of fx / fx
    max_age_days: float = 30.0  # a validated calibration goes stale after this

    def __post_init__(self) -> None:
        if self.min_views < 3 or not (self.max_rms_px > 0 and 0 <= self.min_coverage <= 1):
            raise UsageError(
                "thresholds: --min-views must be at least 3, --max-rms positive and "
                "--min-coverage between 0 and 1"
            )


@dataclass(frozen=True)
class Reason:
    code: str  # stable, for scripts and the UI
    message: str  # for the technician: what is wrong and what to do


@dataclass(frozen=True)
class CaptureSource:
    """The stored recording a calibration's views were taken from, so its frames can be
    shown again."""

    capture_id: str
    manifest_sha256: (
        str  # the capture's manifest: finds its media (labrig.capture.media.load_capture)
    )
    every: int  # every Nth frame of each segment was a view

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> CaptureSource:
        return cls(str(raw["capture_id"]), str(raw["manifest_sha256"]), int(raw["every"]))


@dataclass(frozen=True)
class CalibrationResult:
    board: Board
    image_size: tuple[int, int]  # width, height in px
    camera_matrix: Array  # 3×3
    dist: Array  # k1, k2, p1, p2, k3
    rms_px: float
    view_errors: tuple[tuple[str, float], ...]  # (view, RMS px) of the views the solve used
    rejected: tuple[tuple[str, float, float], ...]  # (view, its error px, the limit it exceeded px)
    skipped: tuple[str, ...]  # views where the board was not found
    coverage: float
    pose_spread_deg: float
    focal_std_px: float
    thresholds: CalibrationThresholds
    used_detections: tuple[Detection, ...]  # the views the solve used, in the order of view_errors
    rejected_detections: tuple[Detection, ...]  # in the order of rejected
    reasons: tuple[Reason, ...] = ()  # why it is not valid; empty when valid
    # None: the views were files given by name, which Labrig does not keep
    source: CaptureSource | None = None
    detected: tuple[
        str, ...
    ] = ()  # the names of the views with the board, in the order they were read

    @property
    def valid(self) -> bool:
        return not self.reasons

    @property
    def view_count(self) -> int:
        return len(self.view_errors)

    def to_json(self) -> dict[str, Any]:
        k, d = self.camera_matrix.tolist(), self.dist
        return {
            "schema": SCHEMA,
            "board": self.board.to_json(),
            "image_size": list(self.image_size),
            "camera_matrix": k,
            "fx": k[0][0],
            "fy": k[1][1],
            "cx": k[0][2],
            "cy": k[1][2],
            "distortion": dict(zip(("k1", "k2", "p1", "p2", "k3"), d.tolist(), strict=True)),
            "rms_px": self.rms_px,
            "view_count": self.view_count,
            "views": [
                {"name": n, "error_px": e, **self._view_json(d)}
                for (n, e), d in zip(self.view_errors, self.used_detections, strict=True)
            ],
            "rejected": [
                {"name": n, "error_px": e, "limit_px": lim, **self._view_json(d)}
                for (n, e, lim), d in zip(self.rejected, self.rejected_detections, strict=True)
            ],
            "skipped": list(self.skipped),
            "coverage": self.coverage,
            "coverage_grid": list(COVERAGE_GRID),
            "pose_spread_deg": self.pose_spread_deg,
            "focal_std_px": self.focal_std_px,
            "thresholds": asdict(self.thresholds),
            "valid": self.valid,
            "reasons": [asdict(r) for r in self.reasons],
            "opencv": cv2.__version__,
            "source": self.source.to_json() if self.source else None,
        }

    def _view_json(self, detection: Detection) -> dict[str, Any]:
        """A view's corners, and its place among the views read (``order``: where names do not sort
        in reading order, as the segment files of one recording, named by their digests, do not)."""
        order = (
            {"order": self.detected.index(detection.name)}
            if detection.name in self.detected
            else {}
        )
        return {**order, **_corners_json(detection)}

    def digest(self) -> str:
        """SHA-256 of the canonical JSON document: the calibration's id."""
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()


def detect_views(
    views: Iterable[View], board: Board, task: Task = UNTRACKED, expected: int | None = None
) -> tuple[list[Detection], list[str], tuple[int, int]]:
    """Detections, names of views without the board, and the common image size (width, height).

    Progress goes to ``task`` per view when ``expected`` (how many views are coming) is known; a
    cancel of ``task`` stops it between views."""
    detections: list[Detection] = []
    skipped: list[str] = []
    size: tuple[int, int] | None = None
    for number, view in enumerate(views, start=1):
        task.check_cancelled()
        shape = (view.image.shape[1], view.image.shape[0])
        if size is not None and shape != size:
            raise ImageSizeMismatchError(
                f"{view.name} is {shape[0]}x{shape[1]} but the views before it are "
                f"{size[0]}x{size[1]}; calibrate one camera mode at a time"
            )
        size, found = shape, detect(view.image, board, view.name)
        if found is None:
            skipped.append(view.name)
        else:
            detections.append(found)
        if expected:
            task.progress(
                min(number / expected, 1.0),
                f"finding the board: view {number} of about {expected}, "
                f"{len(detections)} with the board",
            )
    if size is None or not detections:
        raise BoardNotFoundError(
            f"the {board.describe()} was not found in any of the {len(skipped)} views; check "
            "that the board chosen matches the printed board, and that it is fully in view, "
            "sharp and well lit"
        )
    return detections, skipped, size


@dataclass(frozen=True)
class _Solve:
    rms: float
    matrix: Array
    dist: Array
    rvecs: tuple[Array, ...]
    errors: Array
    focal_std: float


def _solve(views: Sequence[Detection], board: Board, size: tuple[int, int]) -> _Solve:
    obj = board.object_points()
    objs = [obj[d.ids].astype(np.float32) for d in views]
    imgs = [d.corners.astype(np.float32).reshape(-1, 1, 2) for d in views]
    threads = cv2.getNumThreads()
    # OpenCV's parallel solve sums in varying order: the same views gave different last digits
    cv2.setNumThreads(1)
    try:
        # no initial guess used
        rms, k, dist, rvecs, _, std, _, errors = cv2.calibrateCameraExtended(
            objs, imgs, size, np.eye(3), np.zeros(5), flags=FLAGS, criteria=_CRITERIA
        )
    except cv2.error as exc:
        raise DegenerateViewsError(
            f"the views do not determine the camera (OpenCV: {getattr(exc, 'err', exc)}); "
            "move and tilt the board between views"
        ) from None
    finally:
        cv2.setNumThreads(threads)
    solved = _Solve(
        float(rms),
        np.asarray(k, dtype=np.float64),
        np.asarray(dist, dtype=np.float64).ravel()[:5],
        tuple(np.asarray(r, dtype=np.float64) for r in rvecs),
        np.asarray(errors, dtype=np.float64).ravel(),
        float(np.asarray(std).ravel()[0]),
    )
    if not (
        np.isfinite(solved.matrix).all()
        and np.isfinite(solved.dist).all()
        and np.isfinite(solved.rms)
    ):
        raise DegenerateViewsError(
            "the solve diverged; the views are too alike: move and tilt the board more"
        )
    return solved


def stored_corners(detection: Detection) -> Array:
    """A view's corners as the document keeps them (rounded to ``CORNER_DECIMALS``),
    N×2 image px."""
    return np.round(np.asarray(detection.corners, dtype=np.float64).reshape(-1, 2), CORNER_DECIMALS)


def _corners_json(detection: Detection) -> dict[str, Any]:
    return {"ids": [int(i) for i in detection.ids], "corners": stored_corners(detection).tolist()}


def coverage_counts(
    points: npt.ArrayLike, image_size: tuple[int, int], grid: tuple[int, int] = COVERAGE_GRID
) -> Counts:
    """How many of ``points`` (N×2 image px) fall in each cell of ``grid`` (cells across, down) laid
    over an image of ``image_size`` (width, height): a rows × cols array. Points on or past the edge
    count in the edge cells."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    cols = np.clip((pts[:, 0] / image_size[0] * grid[0]).astype(int), 0, grid[0] - 1)
    rows = np.clip((pts[:, 1] / image_size[1] * grid[1]).astype(int), 0, grid[1] - 1)
    counts = np.zeros((grid[1], grid[0]), dtype=np.int64)
    np.add.at(counts, (rows, cols), 1)
    return counts


def _coverage(views: Sequence[Detection], size: tuple[int, int]) -> float:
    # from the corners as stored, so the fraction is exactly what a map drawn from the document
    # shows
    counts = coverage_counts(np.concatenate([stored_corners(d) for d in views]), size)
    return int(np.count_nonzero(counts)) / counts.size


def _pose_spread_deg(rvecs: Sequence[Array]) -> float:
    normals = np.array([cv2.Rodrigues(r)[0][:, 2] for r in rvecs])
    return float(np.degrees(np.arccos(np.clip(normals @ normals.T, -1.0, 1.0))).max())


def _reasons(
    s: _Solve, coverage: float, spread: float, size: tuple[int, int], t: CalibrationThresholds
) -> tuple[Reason, ...]:
    checks = [
        (
            spread < t.min_pose_spread_deg,
            "LABRIG_DEGENERATE_VIEWS",
            f"the board was held at nearly one angle (views differ by {spread:.1f}°, "
            f"{t.min_pose_spread_deg:g}° needed): tilt it left, right, up and down between views",
        ),
        (
            s.rms > t.max_rms_px,
            "LABRIG_RMS_TOO_HIGH",
            f"RMS reprojection error {s.rms:.3f} px is above {t.max_rms_px:g} px: check focus, "
            "motion blur, and that the board is flat and matches the board chosen",
        ),
        (
            coverage < t.min_coverage,
            "LABRIG_COVERAGE_TOO_LOW",
            f"detected corners cover {coverage:.0%} of the image, {t.min_coverage:.0%} needed: add "
            "views with the board near the edges and corners",
        ),
        (
            not s.focal_std <= t.max_focal_uncertainty * s.matrix[0, 0],
            "LABRIG_FOCAL_UNCERTAIN",
            f"the focal length is uncertain by ±{s.focal_std:.1f} px: add views at steeper tilts "
            "and other distances",
        ),
        (
            not (
                0 < s.matrix[0, 2] < size[0] and 0 < s.matrix[1, 2] < size[1] and s.matrix[0, 0] > 0
            ),
            "LABRIG_INTRINSICS_IMPLAUSIBLE",
            "the solved camera is implausible (principal point outside the image or "
            "focal length not positive): recapture with more, sharper views",
        ),
    ]
    return tuple(Reason(code, msg) for failed, code, msg in checks if failed)


def error_limit(errors: npt.ArrayLike, factor: float, floor_px: float) -> float:
    """The error (px) above which a view is rejected: ``factor`` times the median of ``errors``,
    never below ``floor_px``."""
    return max(factor * float(np.median(np.asarray(errors, dtype=np.float64))), floor_px)


def calibrate(
    views: Sequence[Detection],
    image_size: tuple[int, int],
    board: Board,
    thresholds: CalibrationThresholds | None = None,
    skipped: Sequence[str] = (),
    source: CaptureSource | None = None,
) -> CalibrationResult:
    """Solve, reject views far above the median error (keeping ``min_views``), solve again, and
    judge. ``source``: the stored recording the views came from, if any (kept in the document)."""
    t = thresholds or CalibrationThresholds()
    if len(views) < t.min_views:
        raise TooFewViewsError(
            f"the board was found in {len(views)} of {len(views) + len(skipped)} views but "
            f"{t.min_views} are needed; capture more views, moving and tilting the board to cover "
            "the whole image"
        )
    kept: list[Detection] = list(views)
    rejected: list[tuple[Detection, float, float]] = []
    solved = _solve(kept, board, image_size)
    for _ in range(_MAX_ROUNDS):
        limit = error_limit(solved.errors, t.max_view_error_factor, t.view_error_floor_px)
        worst = sorted(
            (i for i, e in enumerate(solved.errors) if e > limit), key=lambda i: -solved.errors[i]
        )
        worst = worst[: len(kept) - t.min_views]
        if not worst:
            break
        rejected += [(kept[i], float(solved.errors[i]), limit) for i in worst]
        kept = [d for i, d in enumerate(kept) if i not in worst]
        solved = _solve(kept, board, image_size)
    coverage, spread = _coverage(kept, image_size), _pose_spread_deg(solved.rvecs)
    return CalibrationResult(
        board=board,
        image_size=image_size,
        camera_matrix=solved.matrix,
        dist=solved.dist,
        rms_px=solved.rms,
        view_errors=tuple((d.name, float(e)) for d, e in zip(kept, solved.errors, strict=True)),
        rejected=tuple((d.name, e, lim) for d, e, lim in rejected),
        skipped=tuple(skipped),
        coverage=coverage,
        pose_spread_deg=spread,
        focal_std_px=solved.focal_std,
        thresholds=t,
        used_detections=tuple(kept),
        rejected_detections=tuple(d for d, _, _ in rejected),
        reasons=_reasons(solved, coverage, spread, image_size, t),
        source=source,
        detected=tuple(d.name for d in views),
    )


def calibrate_views(
    views: Iterable[View],
    board: Board,
    thresholds: CalibrationThresholds | None = None,
    source: CaptureSource | None = None,
    task: Task = UNTRACKED,
    expected: int | None = None,
) -> CalibrationResult:
    """Find the board in ``views`` and solve. The finding is most of the time: it reports to
    ``task`` as :func:`detect_views` does, up to 90 %; the solve itself (one OpenCV call) cannot be
    cancelled midway."""
    detections, skipped, size = detect_views(views, board, Share(task, 0.0, 0.9), expected)
    task.progress(0.9, f"solving the calibration from {len(detections)} views")
    result = calibrate(detections, size, board, thresholds, skipped, source)
    task.progress(1.0, "solved")
    return result


@dataclass(frozen=True)
class CalibrationBinding:
    """A valid calibration bound to one device (serial + mode), current until ``valid_until``."""

    calibration_id: str
    device_id: str
    rms_px: float
    valid_until: datetime

    def is_current(self, now: datetime) -> bool:
        return now < self.valid_until

    def event_payload(self) -> dict[str, Any]:
        """The payload of ``calibration.validated`` (EVT-05)."""
        return {
            "calibration_id": self.calibration_id,
            "device_id": self.device_id,
            "rms_px": self.rms_px,
            "valid_until": self.valid_until.isoformat(),
        }


def bind(result: CalibrationResult, device_id: str, calibrated_at: datetime) -> CalibrationBinding:
    """Bind a valid result to ``device_id`` (e.g. ``SERIAL@1280x720@30 BGR``);
    ``calibrated_at`` must be aware."""
    if not result.valid:
        raise CalibrationNotValidError(
            "this calibration did not validate ("
            + "; ".join(r.message for r in result.reasons)
            + "); it cannot be bound to a device"
        )
    if calibrated_at.utcoffset() is None:
        raise UsageError("calibrated_at needs a time zone (use UTC)")
    until = (calibrated_at + timedelta(days=result.thresholds.max_age_days)).astimezone(UTC)
    return CalibrationBinding(result.digest(), device_id, result.rms_px, until)
