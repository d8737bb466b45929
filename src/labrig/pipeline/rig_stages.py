"""The 3-D stages of a calibrated rig's attempt: tracking.rig → reconstruction.3d → kinematics.3d.

``tracking.rig`` tracks the markers in every camera of the attempt that the rig calibration named
in its configuration covers, each undistorted with that camera's own lens; ``reconstruction.3d``
pairs the cameras' frames by time, matches the markers across cameras and triangulates them in the
calibration's world (:mod:`labrig.pipeline.reconstruction`); ``kinematics.3d`` measures each
marker's path in millimetres and seconds.

Quality gates, raised where the evidence is: no rig calibration, one that is not valid, or fewer
than two of the attempt's cameras in it block (no 3-D without two calibrated views); no marker seen
by two cameras blocks; a camera the calibration does not cover, a marker that relies on only two
cameras for more than ``max_two_camera_share`` of its frames, and reprojection errors above
``max_reprojection_px`` (at p95) degrade. A high sync spread degrades at rig.sync, before these run.

Here the stages' settings are declared; what they compute is in ``rig_runs.py``, imported when a
job of them first runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from labrig.jobs import Setting, in_range
from labrig.pipeline.stage_support import MARKER_SETTINGS, WINDOW_S

NO_RIG_CALIBRATION = "LABRIG_NO_RIG_CALIBRATION"
TOO_FEW_CAMERAS = "LABRIG_RIG_TOO_FEW_CAMERAS"

RIG_TRACKING_DEFAULTS: Mapping[str, Any] = {
    "rig_calibration_id": None,
    "expected_markers": None,
    "marker_hue": None,
}
RECONSTRUCTION_DEFAULTS: Mapping[str, Any] = {
    "rig_calibration_id": None,
    "offsets_ms": None,
    "max_epipolar_px": 4.0,
    "max_view_error_px": 2.0,
    "refine": True,
    "max_two_camera_share": 0.5,
    "max_reprojection_px": 1.5,
}
KINEMATICS_3D_DEFAULTS: Mapping[str, Any] = {"window_s": 0.25}

_RIG_CALIBRATION = Setting(
    (str,), "id of the rig calibration to use (labrig calibrate-rig --rig NAME)", nullable=True
)
RIG_TRACKING_SCHEMA: Mapping[str, Setting] = {
    "rig_calibration_id": _RIG_CALIBRATION,
    **MARKER_SETTINGS,
}
RECONSTRUCTION_SCHEMA: Mapping[str, Setting] = {
    "rig_calibration_id": _RIG_CALIBRATION,
    "offsets_ms": Setting(
        (list,),
        "videos from separate devices: each one's offset (ms) from the first; null: the frames' "
        "own timestamps",
        nullable=True,
    ),
    "max_epipolar_px": Setting(
        (float,),
        "two cameras' tracks further apart than this (median epipolar distance, px) are not one "
        "marker",
        check=in_range(0.1, 100),
    ),
    "max_view_error_px": Setting(
        (float,),
        "a camera's view further than this (px) from the point the others agree on is dropped",
        check=in_range(0.05, 100),
    ),
    "refine": Setting((bool,), "refine each point's reprojection error after the linear solve"),
    "max_two_camera_share": Setting(
        (float,),
        "a marker solved from only two cameras in more than this share of its frames degrades",
        check=in_range(0, 1),
    ),
    "max_reprojection_px": Setting(
        (float,),
        "reprojection error above this (px, at p95 over a marker's frames) degrades",
        check=in_range(0.01, 100),
    ),
}
KINEMATICS_3D_SCHEMA: Mapping[str, Setting] = {"window_s": WINDOW_S}
