"""The rig calibrations list: one row per stored rig calibration, newest first, with its rig, its
cameras, age and verdict.

Threading contract: GUI thread only; rows come from
:meth:`~labrig.calibration.rig_service.RigCalibrationService.calibrations`, read on a pool thread.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

from labrig.calibration import RigCalibrationSummary
from labrig.ui.calibration.model import VERDICT_COLOURS, VERDICT_WORDS
from labrig.ui.common.rows_model import RowsTableModel

COLUMNS = ("Rig", "Cameras", "Age", "RMS (px)", "Verdict")


class RigCalibrationTableModel(RowsTableModel[RigCalibrationSummary]):
    columns = COLUMNS
    status_column = COLUMNS.index("Verdict")

    def key(self, row: RigCalibrationSummary) -> str:
        return row.calibration_id

    def cells(self, row: RigCalibrationSummary) -> tuple[str, ...]:
        return (
            row.rig_name,
            str(len(row.cameras)),
            row.age(),
            f"{row.rms_px:.3f}",
            VERDICT_WORDS[row.validity],
        )

    def status_colour(self, row: RigCalibrationSummary) -> QColor:
        return VERDICT_COLOURS[row.validity]

    def tooltip(self, row: RigCalibrationSummary) -> str:
        until = (
            f"valid until {row.valid_until.astimezone():%Y-%m-%d %H:%M}"
            if row.valid_until
            else "never valid"
        )
        return (
            f"rig calibration {row.calibration_id}\n"
            f"cameras {', '.join(row.cameras)}\n"
            f"calibrated {row.created_at.astimezone():%Y-%m-%d %H:%M}\n{until}"
        )
