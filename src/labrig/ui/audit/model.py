"""The Audit list: one row per audit entry, newest first.

Threading contract: GUI thread only; rows come from
:meth:`~labrig.events.audit.AuditTrail.find`, read on a pool thread by the page.
"""

from __future__ import annotations

import json
from datetime import datetime

from labrig.events import AuditEntryView
from labrig.ui.common.rows_model import RowsTableModel

COLUMNS = ("#", "When", "Who", "Action", "Object", "Reason")
#: what each action is called on screen (the stored name in the tooltip and the detail)
ACTION_WORDS = {
    "review.revise": "revised a result",
    "review.sign_off": "signed off a result",
    "roles.set": "changed a role",
    "release.activate": "activated a release",
    "release.rollback": "rolled back a release",
    "sync.configure": "configured sync",
}
#: the object types the services write, as the filter offers them
OBJECT_TYPES = ("result", "user", "release", "sync_destination")
ID_WIDTH = 16  # longer object ids (uuids) are shortened in the list; the detail has them whole


def local_second(iso: str) -> str:
    """A stored UTC time as the workstation's local second (as stored if it no longer parses)."""
    try:
        return f"{datetime.fromisoformat(iso).astimezone():%Y-%m-%d %H:%M:%S}"
    except ValueError:
        return iso


def object_words(entry: AuditEntryView, *, short: bool = False) -> str:
    """``user tom``; ``short``: a long id (a uuid) cut to its first 8 characters, as listed."""
    long = short and len(entry.object_id) > ID_WIDTH
    return f"{entry.object_type} {entry.object_id[:8] + '…' if long else entry.object_id}"


def detail_text(entry: AuditEntryView) -> str:
    """Everything an entry holds, one field a line, for the detail pane."""
    change = json.dumps(entry.change, indent=2, sort_keys=True, ensure_ascii=False)
    return "\n".join(
        (
            f"Entry {entry.seq} · {local_second(entry.recorded_at)} (UTC {entry.recorded_at})",
            f"Who: {entry.actor} on {entry.host}",
            f"Action: {ACTION_WORDS.get(entry.action, entry.action)} ({entry.action})",
            f"Object: {object_words(entry)}",
            f"Why: {entry.reason}",
            f"Change:\n{change}",
            f"Change digest: {entry.change_digest}",
            f"Previous entry's hash: {entry.prev_hash}",
            f"This entry's hash: {entry.entry_hash}",
        )
    )


class AuditListModel(RowsTableModel[AuditEntryView]):
    columns = COLUMNS

    def key(self, row: AuditEntryView) -> str:
        return str(row.seq)

    def cells(self, row: AuditEntryView) -> tuple[str, ...]:
        return (
            str(row.seq),
            local_second(row.recorded_at),
            row.actor,
            ACTION_WORDS.get(row.action, row.action),
            object_words(row, short=True),
            row.reason,
        )

    def tooltip(self, row: AuditEntryView) -> str:
        return f"{row.action} by {row.actor} on {row.host}\n{object_words(row)}\nwhy: {row.reason}"
