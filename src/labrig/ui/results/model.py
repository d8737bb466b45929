"""The Results list: one row per attempt, newest first, with its result status in words and colour.

Threading contract: GUI thread only; rows come from
:func:`~labrig.results.views.list_attempts`, read on a pool thread by the page.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

from labrig.domain.recordings import attempt_label
from labrig.results import AttemptSummary, ResultStatus
from labrig.ui.common.palette import AMBER, GREEN, GREY, RED
from labrig.ui.common.rows_model import RowsTableModel

COLUMNS = ("Subject", "Attempt", "Result", "Protocol", "Recorded")
STATUS_COLUMN = COLUMNS.index("Result")
#: the results the Export dialog offers
EXPORTABLE = frozenset({ResultStatus.PUBLISHED, ResultStatus.DEGRADED})
STATUS_WORDS = {
    ResultStatus.PUBLISHED: "Published",
    ResultStatus.DEGRADED: "Published, degraded",
    ResultStatus.BLOCKED: "Blocked",
    ResultStatus.PENDING: "Pending",
}
STATUS_COLOURS = {
    ResultStatus.PUBLISHED: QColor(GREEN),
    ResultStatus.DEGRADED: QColor(AMBER),
    ResultStatus.BLOCKED: QColor(RED),
    ResultStatus.PENDING: QColor(GREY),
}


class AttemptResultsModel(RowsTableModel[AttemptSummary]):
    columns = COLUMNS
    status_column = STATUS_COLUMN

    def key(self, row: AttemptSummary) -> str:
        return row.attempt_id

    def cells(self, row: AttemptSummary) -> tuple[str, ...]:
        return (
            row.subject_code,
            f"{row.number} ({label})" if (label := attempt_label(row.note)) else str(row.number),
            STATUS_WORDS[row.status] + (" · calibration changed" if row.flags else ""),
            row.protocol,
            f"{row.created_at.astimezone():%Y-%m-%d %H:%M}",
        )

    def status_colour(self, row: AttemptSummary) -> QColor:
        return STATUS_COLOURS[row.status]

    def tooltip(self, row: AttemptSummary) -> str:
        return "\n".join(
            (f"attempt {row.attempt_id}", *([row.note] if row.note else []), *row.reasons)
        )
