"""The virtual rig's board pictures and their rig calibration, made once for the tests that
calibrate the rig or reconstruct with it (finding the board in 120 pictures is most of their
time)."""

from __future__ import annotations

import pytest

from labrig.calibration import named_board
from labrig.calibration.camera import CalibrationThresholds, View
from labrig.calibration.rig import RigCalibration, RigCameraViews, calibrate_rig
from labrig.calibration.rig_checks import RigThresholds
from labrig.scenarios.rig_stills import board_stills, floor_stills

BOARD = named_board("virtual-rig-9x6-80")
CAMERAS, INSTANTS = range(4), 30
NAMES = ["front", "right", "back", "left"]  # the built-in virtual rig's places
# what 30 pictures per camera reach, the lenses refined against the rig: 0.68 mm and 0.074 deg for
# the worst camera (2.0 mm and 0.20 deg with the sub-pixel step on the sharp picture, 3.1 mm and
# 0.44 deg without the refinement either); the benchmark measures more views
POSITION_MM, ROTATION_DEG = 1.5, 0.15
# 30 pictures of the board crossing the middle of the volume cover about a third of each picture
# and link each camera to another in 6 of them: thresholds they pass, so the result validates
LENIENT = RigThresholds(min_shared_views=2, camera=CalibrationThresholds(min_coverage=0.25))

Stills = tuple[dict[int, list[View]], dict[int, View]]


@pytest.fixture(scope="session")
def stills() -> Stills:
    return board_stills(CAMERAS, INSTANTS), floor_stills(CAMERAS)


@pytest.fixture(scope="session")
def solved(stills: Stills) -> RigCalibration:
    views, floors = stills
    return calibrate_rig(
        [RigCameraViews(NAMES[c], views[c], floor=floors[c]) for c in CAMERAS], BOARD, LENIENT
    )
