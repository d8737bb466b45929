"""Metric scale: the map from image pixels to millimetres on the measurement plane, from views of
the board lying still on it.

:func:`still_plane_view` picks the view that gives the scale from the views of a plane recording and
refuses a board that moved (:class:`PlaneMovingError`): a moving board has no one plane, and a
scale taken from one moment of it would claim mm on a plane that is not there.
:func:`plane_homography` turns that view into the map; :func:`pixels_to_mm` applies it.

Qt-free, no database, deterministic; may run on any thread.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt

from labrig.calibration.boards import Board, Detection
from labrig.calibration.camera import CalibrationResult, DegenerateViewsError
from labrig.errors import LabrigError

Array = npt.NDArray[np.float64]
# how far (px) the board's corners may wander over a plane recording: detection jitter is a few
# hundredths of a pixel; a board lying on a table does not move at all
STILL_PX = 1.5


class PlaneMovingError(LabrigError):
    """The board moved during the recording meant to show it lying still on the plane."""

    code = "LABRIG_PLANE_MOVING"


class PlaneTooShortError(LabrigError):
    """Too few views of the board in the plane recording to tell that it lay still."""

    code = "LABRIG_PLANE_TOO_SHORT"


def board_motion_px(detections: Sequence[Detection]) -> float:
    """The largest distance (px) any corner seen in the first view moved to in a later view."""
    first = detections[0]
    where = dict(zip(first.ids.tolist(), first.corners, strict=True))
    moved = 0.0
    for later in detections[1:]:
        for corner_id, xy in zip(later.ids.tolist(), later.corners, strict=True):
            if corner_id in where:
                moved = max(moved, float(np.hypot(*(xy - where[corner_id]))))
    return moved


def still_plane_view(
    detections: Sequence[Detection], what: str = "the plane recording"
) -> Detection:
    """The first of the views of a plane recording (``what`` names it in errors), once the views
    show the board lying still: at least two views, no corner moving more than :data:`STILL_PX`."""
    if len(detections) < 2:
        raise PlaneTooShortError(
            f"the board was found in {len(detections)} view of {what}, too few to tell that it "
            "lay still: record the board lying on the plane for at least a second"
        )
    moved = board_motion_px(detections)
    if moved > STILL_PX:
        raise PlaneMovingError(
            f"the board moved during {what} (its corners shifted up to {moved:.1f} px, at most "
            f"{STILL_PX:g} px is still): lay the board flat on the measurement plane, keep it "
            "still, and record it again"
        )
    return detections[0]


def _undistort(points: Array, result: CalibrationResult) -> Array:
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
    k = result.camera_matrix
    return np.asarray(cv2.undistortPoints(pts, k, result.dist, P=k), dtype=np.float64).reshape(
        -1, 2
    )


def plane_homography(result: CalibrationResult, detection: Detection, board: Board) -> Array:
    """3×3 map from undistorted image px to mm on the board's plane, from one view of the
    board lying on it."""
    plane = board.object_points()[detection.ids][:, :2]
    h, _ = cv2.findHomography(_undistort(detection.corners, result), plane, 0)
    if h is None:
        raise DegenerateViewsError(
            f"{detection.name}: the board's corners do not define a plane (collinear?)"
        )
    return np.asarray(h, dtype=np.float64)


def pixels_to_mm(points: Array, result: CalibrationResult, h: Array) -> Array:
    """Image points (N×2 px, as captured: distorted) → N×2 mm on the plane of ``h``."""
    plane = cv2.perspectiveTransform(_undistort(points, result).reshape(-1, 1, 2), h)
    return np.asarray(plane, dtype=np.float64).reshape(-1, 2)
