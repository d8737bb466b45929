"""The Calibration list: one row per stored calibration, newest first, with its binding,
age and validity.

Threading contract: GUI thread only; rows come from
:func:`~labrig.calibration.views.list_calibrations`, read on a pool thread by the page.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

from labrig.calibration import CalibrationSummary, Validity
from labrig.ui.common.palette import AMBER, GREEN, GREY, RED
from labrig.ui.common.rows_model import RowsTableModel

COLUMNS = ("Device", "Mode", "Age", "RMS (px)", "Verdict", "Scale")
VERDICT_COLUMN = COLUMNS.index("Verdict")
VERDICT_WORDS = {
    Validity.IN_USE: "Valid, in use",
    Validity.SUPERSEDED: "Valid, superseded",
    Validity.EXPIRED: "Expired",
    Validity.NOT_VALID: "Not valid",
    Validity.DEVICE_CHANGED: "Device changed",
}
VERDICT_COLOURS = {
    Validity.IN_USE: QColor(GREEN),
    Validity.SUPERSEDED: QColor(GREY),
    Validity.EXPIRED: QColor(AMBER),
    Validity.NOT_VALID: QColor(RED),
    Validity.DEVICE_CHANGED: QColor(AMBER),
}


class CalibrationTableModel(RowsTableModel[CalibrationSummary]):
    columns = COLUMNS
    status_column = VERDICT_COLUMN

    def key(self, row: CalibrationSummary) -> str:
        return row.calibration_id

    def cells(self, row: CalibrationSummary) -> tuple[str, ...]:
        return (
            row.device_id,
            row.mode,
            row.age(),
            f"{row.rms_px:.3f}",
            VERDICT_WORDS[row.validity],
            "mm on the plane" if row.has_plane else "pixels only",
        )

    def status_colour(self, row: CalibrationSummary) -> QColor:
        return VERDICT_COLOURS[row.validity]

    def tooltip(self, row: CalibrationSummary) -> str:
        until = (
            f"valid until {row.valid_until.astimezone():%Y-%m-%d %H:%M}"
            if row.valid_until
            else "never bound"
        )
        return (
            f"calibration {row.calibration_id}\n"
            f"calibrated {row.created_at.astimezone():%Y-%m-%d %H:%M}\n"
            f"{until}"
        )
