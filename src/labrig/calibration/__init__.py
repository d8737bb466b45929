"""Single-camera calibration: boards and their detection, the solve with its quality thresholds and
metric scale from a board on the measurement plane, stored calibrations bound to a device and mode,
what the Calibration screen reads about them, and calibrating from a stored recording. Qt-free.

Modules: ``boards`` (specs, named boards, detection), ``images`` (views read from image and video
files), ``camera`` (the solve), ``plane`` (the still board on the plane, the mm scale), ``stored``
(saving, finding the current one), ``views`` (the screen's reads), ``board_captures`` (calibrating
from committed recordings), ``service`` (what the Calibration screen asks). Rigs: ``rig`` (the
solve), ``rig_solve``, ``rig_checks``, ``board_order``, ``rig_stored`` (stored rig calibrations and
their calibrated cameras), ``rig_captures`` (a rig recording's frames paired by time),
``rig_service`` (what the screen's rig mode asks), ``geometry`` and ``triangulation`` (poses,
projection, N-view triangulation).
"""

from typing import TYPE_CHECKING

from labrig.lazy import lazy_attributes

if TYPE_CHECKING:
    from labrig.calibration.board_captures import (
        CalibrationOutcome,
        CaptureChoice,
        calibrate_from_capture,
        committed_captures,
    )
    from labrig.calibration.boards import Board, Detection, load_boards, named_board, parse_board
    from labrig.calibration.camera import (
        COVERAGE_GRID,
        BoardNotFoundError,
        CalibrationBinding,
        CalibrationResult,
        CalibrationThresholds,
        CaptureSource,
        View,
        bind,
        calibrate,
        calibrate_views,
        detect_views,
    )
    from labrig.calibration.geometry import Pose, normalised, project
    from labrig.calibration.images import load_views
    from labrig.calibration.plane import (
        PlaneMovingError,
        PlaneTooShortError,
        pixels_to_mm,
        plane_homography,
        still_plane_view,
    )
    from labrig.calibration.rig_captures import pair_instants
    from labrig.calibration.rig_service import (
        RigCalibrationDetail,
        RigCalibrationOutcome,
        RigCalibrationService,
        RigCalibrationSummary,
        RigRecordingChoice,
    )
    from labrig.calibration.rig_stored import (
        CalibratedCamera,
        RigCalibrationNotFoundError,
        StoredRigCalibration,
        current_rig_calibration,
        load_rig_calibration,
        rig_calibrations,
    )
    from labrig.calibration.service import CalibrationService
    from labrig.calibration.stored import (
        Readiness,
        StoredCalibration,
        current_calibration,
        load_calibration,
        save_calibration,
    )
    from labrig.calibration.triangulation import Triangulated, triangulate, triangulate_views
    from labrig.calibration.views import (
        CalibrationDetail,
        CalibrationSummary,
        Validity,
        ViewError,
        list_calibrations,
        load_calibration_detail,
        load_view_frame,
    )

#: each name and the module of this package that defines it, imported at first use
_FROM = {
    "CalibrationOutcome": "board_captures",
    "CaptureChoice": "board_captures",
    "calibrate_from_capture": "board_captures",
    "committed_captures": "board_captures",
    "Board": "boards",
    "Detection": "boards",
    "load_boards": "boards",
    "named_board": "boards",
    "parse_board": "boards",
    "BoardNotFoundError": "camera",
    "COVERAGE_GRID": "camera",
    "CalibrationBinding": "camera",
    "CalibrationResult": "camera",
    "CalibrationThresholds": "camera",
    "CaptureSource": "camera",
    "View": "camera",
    "bind": "camera",
    "calibrate": "camera",
    "calibrate_views": "camera",
    "detect_views": "camera",
    "Pose": "geometry",
    "normalised": "geometry",
    "project": "geometry",
    "load_views": "images",
    "PlaneMovingError": "plane",
    "PlaneTooShortError": "plane",
    "pixels_to_mm": "plane",
    "plane_homography": "plane",
    "still_plane_view": "plane",
    "pair_instants": "rig_captures",
    "RigCalibrationDetail": "rig_service",
    "RigCalibrationOutcome": "rig_service",
    "RigCalibrationService": "rig_service",
    "RigCalibrationSummary": "rig_service",
    "RigRecordingChoice": "rig_service",
    "CalibratedCamera": "rig_stored",
    "RigCalibrationNotFoundError": "rig_stored",
    "StoredRigCalibration": "rig_stored",
    "current_rig_calibration": "rig_stored",
    "load_rig_calibration": "rig_stored",
    "rig_calibrations": "rig_stored",
    "CalibrationService": "service",
    "Readiness": "stored",
    "StoredCalibration": "stored",
    "current_calibration": "stored",
    "load_calibration": "stored",
    "save_calibration": "stored",
    "Triangulated": "triangulation",
    "triangulate": "triangulation",
    "triangulate_views": "triangulation",
    "CalibrationDetail": "views",
    "CalibrationSummary": "views",
    "Validity": "views",
    "ViewError": "views",
    "list_calibrations": "views",
    "load_calibration_detail": "views",
    "load_view_frame": "views",
}
__getattr__ = lazy_attributes(__name__, _FROM)

__all__ = [
    "COVERAGE_GRID",
    "Board",
    "BoardNotFoundError",
    "CalibratedCamera",
    "CalibrationBinding",
    "CalibrationDetail",
    "CalibrationOutcome",
    "CalibrationResult",
    "CalibrationService",
    "CalibrationSummary",
    "CalibrationThresholds",
    "CaptureChoice",
    "CaptureSource",
    "Detection",
    "PlaneMovingError",
    "PlaneTooShortError",
    "Pose",
    "Readiness",
    "RigCalibrationDetail",
    "RigCalibrationNotFoundError",
    "RigCalibrationOutcome",
    "RigCalibrationService",
    "RigCalibrationSummary",
    "RigRecordingChoice",
    "StoredCalibration",
    "StoredRigCalibration",
    "Triangulated",
    "Validity",
    "View",
    "ViewError",
    "bind",
    "calibrate",
    "calibrate_from_capture",
    "calibrate_views",
    "committed_captures",
    "current_calibration",
    "current_rig_calibration",
    "detect_views",
    "list_calibrations",
    "load_boards",
    "load_calibration",
    "load_calibration_detail",
    "load_rig_calibration",
    "load_view_frame",
    "load_views",
    "named_board",
    "normalised",
    "pair_instants",
    "parse_board",
    "pixels_to_mm",
    "plane_homography",
    "project",
    "rig_calibrations",
    "save_calibration",
    "still_plane_view",
    "triangulate",
    "triangulate_views",
]
