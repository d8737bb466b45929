"""The audit trail: written in the caller's transaction, like the outbox, and hash-chained.

Every mutating operation of review, roles and releases calls :func:`record_audit`
in the same session as its change, so both commit or neither does. Entries are
never changed nor removed (database triggers refuse it, for admins too);
:meth:`AuditTrail.verify` recomputes the chain from the stored bytes.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from labrig.domain.audit import (
    COLUMNS,
    GENESIS,
    Actor,
    ChainHead,
    ChainReport,
    change_digest,
    entry_hash,
    verify_chain,
)
from labrig.domain.idempotency import canonical_json
from labrig.errors import LabrigError
from labrig.store import Store, utcnow
from labrig.store.dialects import chain_lock_sql, fetch_stored_text
from labrig.store.models import AuditEntry

_SELECT = f"SELECT {', '.join(COLUMNS)} FROM audit_entries"


@dataclass(frozen=True)
class AuditEntryView:
    """An entry as read back (text that is not valid UTF-8 shows replacement characters)."""

    seq: int
    recorded_at: str
    actor: str
    host: str
    action: str
    object_type: str
    object_id: str
    reason: str
    change: Any  # the recorded change (parsed JSON; the raw text if it no longer parses)
    change_digest: str
    prev_hash: str
    entry_hash: str

    @classmethod
    def of(cls, row: Sequence[Any]) -> AuditEntryView:
        seq, *rest = row
        text = [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in rest]
        fields: dict[str, Any] = dict(zip(COLUMNS[1:], text, strict=True))
        # else shown as stored; `labrig audit verify` says what is wrong
        with contextlib.suppress(ValueError):
            fields["change"] = json.loads(fields["change"])
        return cls(seq=seq, **fields)

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


class AuditDatesError(LabrigError):
    code = "LABRIG_AUDIT_DATES"


@dataclass(frozen=True)
class AuditQuery:
    """Which entries to show: each given criterion must hold (none given: every entry).

    ``object_id`` matches any entry whose object id contains it (ids are long; people paste part of
    one); ``actor`` is a login, matched whole and without regard to case; the dates are the
    workstation's local calendar days, both included.
    """

    object_type: str | None = None
    object_id: str | None = None
    actor: str | None = None
    since: date | None = None
    until: date | None = None

    def __post_init__(self) -> None:
        if self.since is not None and self.until is not None and self.since > self.until:
            raise AuditDatesError(
                f"the first day ({self.since}) is after the last day ({self.until}); "
                "swap the two dates, or widen the range"
            )

    def matches(self, entry: AuditEntryView) -> bool:
        part = (self.object_id or "").strip().lower()
        who = (self.actor or "").strip().lower()
        day = local_day(entry.recorded_at)
        return (
            (not self.object_type or entry.object_type == self.object_type)
            and (not part or part in entry.object_id.lower())
            and (not who or entry.actor.lower() == who)
            and (self.since is None or (day is not None and day >= self.since))
            and (self.until is None or (day is not None and day <= self.until))
        )


def local_day(recorded_at: str) -> date | None:
    """The workstation's calendar day of a stored UTC time (None if it no longer parses)."""
    try:
        return datetime.fromisoformat(recorded_at).astimezone().date()
    except ValueError:
        return None


def _stored_rows(session: Session, sql: str) -> list[tuple[Any, ...]]:
    conn = session.connection()
    return fetch_stored_text(conn.dialect.name, conn.connection.driver_connection, sql)


def chain_head(session: Session) -> ChainHead:
    """The stored head of the chain as ``session`` sees it (an export or sync batch records
    it with its data)."""
    rows = _stored_rows(
        session, "SELECT seq, entry_hash FROM audit_entries ORDER BY seq DESC LIMIT 1"
    )
    if not rows:
        return ChainHead(0, GENESIS)
    seq, digest = rows[0]
    return ChainHead(
        seq, digest.decode("utf-8", "replace") if isinstance(digest, bytes) else str(digest)
    )


def record_audit(
    session: Session,
    actor: Actor,
    action: str,
    object_type: str,
    object_id: str,
    reason: str,
    change: Mapping[str, Any],
) -> AuditEntry:
    """Append an entry to the chain in ``session``'s (write) transaction; flushed so the next
    one links to it.

    Appends are one at a time per catalog, also across workstations (on PostgreSQL an
    advisory lock held to the end of the transaction), so no two entries claim one place.
    """
    lock = chain_lock_sql(session.connection().dialect.name)
    if lock is not None:
        session.execute(text(lock))
    head = chain_head(session)
    body = canonical_json(dict(change)).decode()
    content = {
        "seq": head.seq + 1,
        "recorded_at": utcnow().isoformat(timespec="microseconds"),
        "actor": actor.user,
        "host": actor.host,
        "action": action,
        "object_type": object_type,
        "object_id": object_id,
        "reason": reason,
        "change": body,
        "change_digest": change_digest(body),
    }
    row = AuditEntry(
        **content, prev_hash=head.entry_hash, entry_hash=entry_hash(head.entry_hash, content)
    )
    session.add(row)
    session.flush()
    return row


class AuditTrail:
    """Reading and verifying the trail. Writing happens only through :func:`record_audit`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def entries(self, object_id: str | None = None) -> list[AuditEntryView]:
        """Every entry in order, or those about one object."""
        with self.store.read() as session:
            rows = _stored_rows(session, f"{_SELECT} ORDER BY seq")
        views = [AuditEntryView.of(r) for r in rows]
        return [v for v in views if v.object_id == object_id] if object_id else views

    def find(self, query: AuditQuery) -> list[AuditEntryView]:
        """The entries ``query`` matches, newest first (what the Audit screen lists)."""
        return [v for v in reversed(self.entries()) if query.matches(v)]

    def entry(self, seq: int) -> AuditEntryView | None:
        """Entry number ``seq`` as stored, or None when there is no such entry."""
        with self.store.read() as session:
            rows = _stored_rows(session, f"{_SELECT} WHERE seq = {int(seq)}")
        return AuditEntryView.of(rows[0]) if rows else None

    def head(self) -> ChainHead:
        with self.store.read() as session:
            return chain_head(session)

    def verify(self) -> ChainReport:
        """Recompute every entry's hash and link from the stored bytes; the first
        broken entry is named."""
        with self.store.read() as session:
            rows = _stored_rows(session, f"{_SELECT} ORDER BY seq")
        return verify_chain(rows)
