"""Writing events into the outbox, inside the caller's transaction.

An event is recorded in the same session (so the same transaction) as the
state change that causes it: both commit or neither does. A name outside the
seed-000 catalog is still recorded, flagged ``known = False``, so nothing a
plug-in emits is lost; a catalogued name must carry a valid payload.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain.events import spec_for
from labrig.domain.ids import time_ordered_id
from labrig.errors import InvalidEventPayloadError
from labrig.store import EVENTS_IN_TRANSACTION, Store, utcnow
from labrig.store.models import OutboxEvent


@dataclass(frozen=True)
class EventRecord:
    """An event as consumers and the UI see it (a frozen copy of its outbox row)."""

    seq: int
    event_id: str
    name: str
    schema_version: int
    known: bool
    payload: dict[str, Any]
    recorded_at: datetime

    @classmethod
    def from_row(cls, row: OutboxEvent) -> EventRecord:
        return cls(
            row.seq,
            row.event_id,
            row.name,
            row.schema_version,
            row.known,
            json.loads(row.payload),
            row.recorded_at,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "event_id": self.event_id,
            "name": self.name,
            "schema_version": self.schema_version,
            "known": self.known,
            "recorded_at": self.recorded_at.isoformat(),
            "payload": self.payload,
        }


# made once, not per event
_PAYLOAD = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)


def payload_text(name: str, payload: Mapping[str, Any]) -> str:
    """The stored text of an event's payload, checked against the catalog when
    ``name`` is catalogued.

    Raises :class:`InvalidEventPayloadError` when it does not match, or is not plain JSON data.
    """
    spec = spec_for(name)
    if spec is not None:
        spec.validate(payload)
    try:
        return _PAYLOAD.encode(dict(payload))
    except (TypeError, ValueError) as exc:
        raise InvalidEventPayloadError(f"{name} payload is not plain JSON data: {exc}") from exc


def record_event(
    session: Session, name: str, payload: Mapping[str, Any], *, version: int | None = None
) -> OutboxEvent:
    """Add an event to ``session``'s transaction; flushed so its ``seq`` is known at once.

    Raises :class:`InvalidEventPayloadError` for a catalogued name whose payload
    or version does not match the catalog; the caller's transaction then rolls back.
    """
    spec = spec_for(name)
    if spec is not None and version is not None and version != spec.version:
        raise InvalidEventPayloadError(
            f"{name} is catalogued at schema version {spec.version}, not {version}"
        )
    body = payload_text(name, payload)
    row = OutboxEvent(
        event_id=time_ordered_id(),
        name=str(name),
        schema_version=spec.version if spec else (version or 0),
        known=spec is not None,
        payload=body,
        recorded_at=utcnow(),
    )
    session.add(row)
    session.flush()
    session.info[EVENTS_IN_TRANSACTION] = session.info.get(EVENTS_IN_TRANSACTION, 0) + 1
    return row


def events_after(store: Store, seq: int, limit: int = 1000) -> list[EventRecord]:
    """Recorded events with a sequence number above ``seq``, in order."""
    with store.read() as session:
        rows = session.scalars(
            select(OutboxEvent).where(OutboxEvent.seq > seq).order_by(OutboxEvent.seq).limit(limit)
        )
        return [EventRecord.from_row(row) for row in rows]
