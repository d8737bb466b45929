"""Deliveries that failed: each consumer's failed events wait for a retry time that backs off
exponentially, and are forgotten once handled."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, delete, select
from sqlalchemy.orm import Session

from labrig.events.cursors import probed
from labrig.store.models import DeliveryFailure, OutboxEvent

MAX_BACKOFF = timedelta(minutes=5)


@dataclass(frozen=True)
class FailureInfo:
    consumer: str
    event_id: str
    attempts: int
    last_error: str
    next_attempt_at: datetime


def retry_delay(attempts: int) -> timedelta:
    """Exponential backoff after ``attempts`` failures: 1 s, 2 s, 4 s … capped at 5 min."""
    return min(timedelta(seconds=2 ** min(attempts - 1, 16)), MAX_BACKOFF)


def waiting(consumer: str, now: datetime) -> ColumnElement[bool]:
    """The outbox rows whose delivery to ``consumer`` failed and whose retry time has not come."""
    return probed(
        select(DeliveryFailure.event_id).where(
            DeliveryFailure.consumer == consumer,
            DeliveryFailure.event_id == OutboxEvent.event_id,
            DeliveryFailure.next_attempt_at > now,
        )
    )


def record_failure(
    session: Session, consumer: str, event_id: str, exc: Exception, now: datetime
) -> None:
    """In the delivering transaction: one more failure of ``event_id`` for ``consumer``."""
    failure = session.get(DeliveryFailure, (consumer, event_id))
    if failure is None:
        failure = DeliveryFailure(consumer=consumer, event_id=event_id, attempts=0)
        session.add(failure)
    failure.attempts += 1
    failure.last_error = f"{type(exc).__name__}: {exc}"
    failure.next_attempt_at = now + retry_delay(failure.attempts)
    session.flush()


def forget_failures(session: Session, consumer: str, event_ids: Iterable[str]) -> None:
    """Earlier failures of events now handled: they are not waiting for a retry any more."""
    ids = list(event_ids)
    if ids:
        session.execute(
            delete(DeliveryFailure)
            .where(DeliveryFailure.consumer == consumer)
            .where(DeliveryFailure.event_id.in_(ids))
            .execution_options(synchronize_session=False)
        )


def failures(session: Session) -> list[FailureInfo]:
    """Deliveries waiting for a retry, soonest first."""
    rows = session.scalars(select(DeliveryFailure).order_by(DeliveryFailure.next_attempt_at))
    return [
        FailureInfo(r.consumer, r.event_id, r.attempts, r.last_error, r.next_attempt_at)
        for r in rows
    ]
