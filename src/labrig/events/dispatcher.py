"""At-least-once delivery from the outbox to idempotent consumers.

Each consumer has a durable inbox: the id of every event it handled, written in
the same transaction as the consumer's own changes. A redelivery (a second
dispatcher, a crash before the commit, a restart) finds the id and changes
nothing. A consumer that raises has its failure recorded and is retried after
a backoff, while other consumers (and its own later events) go on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import and_, exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from labrig.events.outbox import EventRecord
from labrig.store.database import Store
from labrig.store.models import DeliveryFailure, InboxEntry, OutboxEvent
from labrig.store.types import utcnow

log = logging.getLogger(__name__)

Handler = Callable[[EventRecord, Session], None]
MAX_BACKOFF = timedelta(minutes=5)


class Outcome(StrEnum):
    HANDLED = "handled"
    DUPLICATE = "duplicate"
    FAILED = "failed"


@dataclass(frozen=True)
class Consumer:
    """A named, durable consumer. ``names`` limits it to some events (None: all)."""

    name: str
    handler: Handler
    names: frozenset[str] | None = None


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


@dataclass
class Dispatcher:
    """Delivers pending outbox events to registered consumers.

    Threading: ``dispatch_once`` may run on any thread; handlers run on that
    thread, each in its own write transaction.
    """

    store: Store
    batch: int = 200
    consumers: dict[str, Consumer] = field(default_factory=dict)
    clock: Callable[[], datetime] = utcnow

    def register(self, name: str, handler: Handler, names: Iterable[str] | None = None) -> None:
        self.consumers[name] = Consumer(name, handler, frozenset(names) if names is not None else None)

    def pending(self, consumer: Consumer, limit: int) -> list[EventRecord]:
        """Events the consumer has not processed and whose retry time has come."""
        query = (
            select(OutboxEvent)
            .where(~exists().where(and_(InboxEntry.consumer == consumer.name,
                                        InboxEntry.event_id == OutboxEvent.event_id)))
            .where(~exists().where(and_(DeliveryFailure.consumer == consumer.name,
                                        DeliveryFailure.event_id == OutboxEvent.event_id,
                                        DeliveryFailure.next_attempt_at > self.clock())))
            .order_by(OutboxEvent.seq)
            .limit(limit)
        )
        if consumer.names is not None:
            query = query.where(OutboxEvent.name.in_(consumer.names))
        with self.store.read() as session:
            return [EventRecord.from_row(row) for row in session.scalars(query)]

    def deliver(self, consumer: Consumer, event: EventRecord) -> Outcome:
        """Deliver one event to one consumer, exactly once in effect."""
        try:
            with self.store.write() as session:
                if session.get(InboxEntry, (consumer.name, event.event_id)) is not None:
                    return Outcome.DUPLICATE
                session.add(InboxEntry(consumer=consumer.name, event_id=event.event_id, processed_at=self.clock()))
                session.flush()
                consumer.handler(event, session)
                failure = session.get(DeliveryFailure, (consumer.name, event.event_id))
                if failure is not None:
                    session.delete(failure)
        except IntegrityError:
            return Outcome.DUPLICATE  # another dispatcher recorded it first
        except Exception as exc:  # noqa: BLE001 - a consumer's bug must not stop the others
            log.warning("consumer %s failed on event %s: %s", consumer.name, event.seq, exc)
            self._record_failure(consumer, event, exc)
            return Outcome.FAILED
        return Outcome.HANDLED

    def _record_failure(self, consumer: Consumer, event: EventRecord, exc: Exception) -> None:
        with self.store.write() as session:
            failure = session.get(DeliveryFailure, (consumer.name, event.event_id))
            if failure is None:
                failure = DeliveryFailure(consumer=consumer.name, event_id=event.event_id, attempts=0)
                session.add(failure)
            failure.attempts += 1
            failure.last_error = f"{type(exc).__name__}: {exc}"
            failure.next_attempt_at = self.clock() + retry_delay(failure.attempts)

    def dispatch_once(self) -> dict[Outcome, int]:
        """One pass over every consumer; returns how many deliveries had each outcome."""
        counts = dict.fromkeys(Outcome, 0)
        for consumer in list(self.consumers.values()):
            for event in self.pending(consumer, self.batch):
                counts[self.deliver(consumer, event)] += 1
        return counts

    def dispatch_all(self) -> dict[Outcome, int]:
        """Pass after pass until a pass hands nothing new to any consumer: every event deliverable now is
        delivered (a consumer that keeps failing waits for its retry time and does not hold this up)."""
        total = dict.fromkeys(Outcome, 0)
        while True:
            counts = self.dispatch_once()
            for outcome, n in counts.items():
                total[outcome] += n
            if not counts[Outcome.HANDLED] and not counts[Outcome.DUPLICATE]:
                return total

    def failures(self) -> list[FailureInfo]:
        """Deliveries waiting for a retry, soonest first."""
        with self.store.read() as session:
            rows = session.scalars(select(DeliveryFailure).order_by(DeliveryFailure.next_attempt_at))
            return [FailureInfo(r.consumer, r.event_id, r.attempts, r.last_error, r.next_attempt_at) for r in rows]


class DispatcherThread:
    """Runs a dispatcher in the background: woken by local commits, polling for other processes'.

    ``listeners`` receive every newly seen event, called from this thread.
    """

    def __init__(self, dispatcher: Dispatcher, poll_seconds: float = 1.0) -> None:
        self.dispatcher = dispatcher
        self.poll_seconds = poll_seconds
        self.listeners: list[Callable[[EventRecord], None]] = []
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_seq = _last_seq(dispatcher.store)
        dispatcher.store.on_events_committed(self._wake.set)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="labrig-dispatcher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.poll_seconds)
            self._wake.clear()
            try:
                self._announce_new()
                self.dispatcher.dispatch_once()
            except Exception:  # keep delivering after a transient database error
                log.exception("event dispatch pass failed; retrying")

    def _announce_new(self) -> None:
        for event in events_after(self.dispatcher.store, self._last_seq):
            self._last_seq = event.seq
            for listener in list(self.listeners):
                listener(event)


def _last_seq(store: Store) -> int:
    with store.read() as session:
        return session.scalar(select(OutboxEvent.seq).order_by(OutboxEvent.seq.desc()).limit(1)) or 0


def events_after(store: Store, seq: int, limit: int = 1000) -> list[EventRecord]:
    """Recorded events with a sequence number above ``seq``, in order."""
    with store.read() as session:
        rows = session.scalars(select(OutboxEvent).where(OutboxEvent.seq > seq).order_by(OutboxEvent.seq).limit(limit))
        return [EventRecord.from_row(row) for row in rows]
