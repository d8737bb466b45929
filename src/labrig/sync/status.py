"""``labrig sync status``: what is acknowledged, what is pending, and the last thing that went
wrong. Read-only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, exists, func, select
from sqlalchemy.orm import Session

from labrig.events import unread_by
from labrig.store import Store
from labrig.store.models import InboxEntry, OutboxEvent, SyncAck, SyncBatch, SyncFailure, SyncObject
from labrig.sync.faults import code_of
from labrig.sync.index import INDEXED, SYNC_INDEXER
from labrig.sync.service import current_destination


@dataclass(frozen=True)
class SyncStatus:
    destination: dict[str, Any] | None
    objects: int  # indexed objects
    acknowledged: int  # … acknowledged by the destination in force
    pending: int  # … not (yet) acknowledged by it
    failing: int  # pending objects whose last copy failed (they are retried with backoff)
    not_indexed: int  # events whose objects are not indexed yet (the next batch indexes them first)
    # media, timestamps, capture-manifest, result → acknowledged, pending
    by_content: dict[str, dict[str, int]]
    # the latest failure of a pending object, or the last batch's error: at, object (a digest or
    # None), attempts, code (LABRIG_…, None for a cancelled batch), error ("CODE: message")
    last_error: dict[str, Any] | None
    last_batch: dict[str, Any] | None
    next_retry_at: str | None

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


def _not_indexed(session: Session) -> int:
    handled = exists().where(
        and_(InboxEntry.consumer == SYNC_INDEXER, InboxEntry.event_id == OutboxEvent.event_id)
    )
    return (
        session.scalar(
            select(func.count())
            .select_from(OutboxEvent)
            .where(unread_by(session, SYNC_INDEXER, INDEXED))
            .where(OutboxEvent.name.in_(INDEXED))
            .where(~handled)
        )
        or 0
    )


def _last_error(session: Session, destination_id: str) -> dict[str, Any] | None:
    failure = session.scalar(
        select(SyncFailure)
        .where(SyncFailure.destination_id == destination_id)
        .order_by(SyncFailure.failed_at.desc())
        .limit(1)
    )
    # a batch error counts while it is the latest batch's: once a batch got through, it is history
    batch = session.scalar(
        select(SyncBatch)
        .where(SyncBatch.destination_id == destination_id)
        .order_by(SyncBatch.started_at.desc())
        .limit(1)
    )
    errors = []
    if failure is not None:
        errors.append(
            {
                "at": failure.failed_at.isoformat(),
                "object": failure.sha256,
                "attempts": failure.attempts,
                "code": code_of(failure.last_error),
                "error": failure.last_error,
            }
        )
    if batch is not None and batch.error is not None and batch.finished_at is not None:
        errors.append(
            {
                "at": batch.finished_at.isoformat(),
                "object": None,
                "attempts": None,
                "code": code_of(batch.error),
                "error": batch.error,
            }
        )
    return max(errors, key=lambda e: str(e["at"])) if errors else None


def sync_status(store: Store) -> SyncStatus:
    with store.read() as session:
        config = current_destination(session)
        dest = config.destination_id if config else ""
        acked = {
            sha
            for sha in session.scalars(select(SyncAck.sha256).where(SyncAck.destination_id == dest))
        }
        objects = list(session.execute(select(SyncObject.sha256, SyncObject.content)).all())
        failing = set(
            session.scalars(select(SyncFailure.sha256).where(SyncFailure.destination_id == dest))
        )
        by_content: dict[str, dict[str, int]] = {}
        for sha, content in objects:
            counts = by_content.setdefault(content, {"acknowledged": 0, "pending": 0})
            counts["acknowledged" if sha in acked else "pending"] += 1
        batch = session.scalar(
            select(SyncBatch)
            .where(SyncBatch.destination_id == dest)
            .order_by(SyncBatch.started_at.desc())
            .limit(1)
        )
        retry = session.scalar(
            select(func.min(SyncFailure.next_attempt_at)).where(SyncFailure.destination_id == dest)
        )
        return SyncStatus(
            destination=config.to_json() if config else None,
            objects=len(objects),
            acknowledged=sum(1 for sha, _ in objects if sha in acked),
            pending=sum(1 for sha, _ in objects if sha not in acked),
            failing=len(failing - acked),
            not_indexed=_not_indexed(session),
            by_content=by_content,
            last_error=_last_error(session, dest) if config else None,
            last_batch=None
            if batch is None
            else {
                "batch_id": batch.id,
                "started_at": batch.started_at.isoformat(),
                "finished_at": batch.finished_at.isoformat() if batch.finished_at else None,
                "acknowledged": batch.acknowledged,
                "failed": batch.failed,
                "error": batch.error,
                "batch_file": batch.batch_file,
                "audit_chain_head": {"seq": batch.chain_seq, "entry_hash": batch.chain_hash},
            },
            next_retry_at=retry.isoformat() if retry is not None else None,
        )
