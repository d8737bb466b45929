"""The Review list: one row per published result, newest first, with how many times
reviewers revised it.

Threading contract: GUI thread only; rows come from :func:`~labrig.review.views.read_review_list`,
read on a pool thread by the page.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

from labrig.review import ReviewListRow, local_time
from labrig.ui.common.palette import AMBER
from labrig.ui.common.rows_model import RowsTableModel

COLUMNS = ("Subject", "Attempt", "Published", "Revisions", "Note")
REVISIONS_COLUMN = COLUMNS.index("Revisions")
REVISED = QColor(AMBER)  # the colour of revised values on the Review and Results pages


def note(row: ReviewListRow) -> str:
    words = []
    if row.degraded:
        words.append("degraded")
    if row.superseded:
        words.append("superseded by a reprocess")
    return ", ".join(words)


class ReviewListModel(RowsTableModel[ReviewListRow]):
    columns = COLUMNS
    status_column = REVISIONS_COLUMN

    def key(self, row: ReviewListRow) -> str:
        return row.result_id

    def cells(self, row: ReviewListRow) -> tuple[str, ...]:
        return (
            row.subject_code or row.attempt_id[:8],
            "—" if row.attempt_number is None else str(row.attempt_number),
            local_time(row.created_at),
            str(row.revisions),
            note(row),
        )

    def status_colour(self, row: ReviewListRow) -> QColor | None:
        return REVISED if row.revisions else None

    def tooltip(self, row: ReviewListRow) -> str:
        return f"result {row.result_id}\nattempt {row.attempt_id}"
