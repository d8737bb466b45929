"""The roster: one row per user who was ever given a role, with the assignment in force.

Threading contract: GUI thread only; rows come from :meth:`~labrig.access.AccessControl.roster`,
read on a pool thread by the page.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

from labrig.access import UserRole
from labrig.review import local_time
from labrig.ui.common.palette import GREEN, GREY
from labrig.ui.common.rows_model import RowsTableModel

COLUMNS = ("User", "Role", "Assigned by", "Assigned at", "Reason")
ROLE_COLUMN = COLUMNS.index("Role")
REMOVED = "none (removed)"


class RosterModel(RowsTableModel[UserRole]):
    columns = COLUMNS
    status_column = ROLE_COLUMN

    def key(self, row: UserRole) -> str:
        return row.user

    def cells(self, row: UserRole) -> tuple[str, ...]:
        return (
            row.user,
            row.role or REMOVED,
            row.assigned_by,
            local_time(row.assigned_at),
            row.reason,
        )

    def status_colour(self, row: UserRole) -> QColor | None:
        return (
            QColor(GREEN if row.role == "admin" else GREY) if row.role in ("admin", None) else None
        )
