"""At-least-once delivery from the outbox to idempotent consumers.

Each consumer has a durable inbox: the id of every event it handled, written in
the same transaction as the consumer's own changes. A redelivery (a second
dispatcher, a crash before the commit, a restart) finds the id and changes
nothing. A consumer that raises has its failure recorded and is retried after
a backoff, while other consumers (and its own later events) go on.

On SQLite each consumer also has a cursor (``outbox_cursors``): every event up
to it is in its inbox or not one it takes, so a pass reads the outbox from
there instead of from the first event ever recorded. The cursor moves in the
delivery's own transaction, up to the consumer's first event still open (a
failing one holds it). That is sound only where no event can be committed
below a number already seen, which SQLite guarantees (one writer at a time);
PostgreSQL may commit out of number order, so there every pass reads all.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import Select, and_, exists, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from labrig.events.outbox import EventRecord
from labrig.fsutil import DiskFullError, disk_full
from labrig.store import Store, utcnow
from labrig.store.dialects import commits_in_seq_order
from labrig.store.models import DeliveryFailure, InboxEntry, OutboxCursor, OutboxEvent

log = logging.getLogger(__name__)

Handler = Callable[[EventRecord, Session], None]
MAX_BACKOFF = timedelta(minutes=5)
#: a consumer whose cursor lags the last event by more than this, with nothing to deliver,
#: has it advanced
CATCH_UP_AFTER = 500
#: what a pass stopped by a full disk left undone
UNDELIVERED = (
    "results and other consequences of what was committed are not delivered yet; they are, "
    "once there is room (the next 'labrig worker', or the window's next pass)"
)


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
        self.consumers[name] = Consumer(
            name, handler, frozenset(names) if names is not None else None
        )

    def pending(self, consumer: Consumer, limit: int) -> list[EventRecord]:
        """Events the consumer has not processed and whose retry time has come
        (from its cursor on)."""
        with self.store.read() as session:
            query = (
                _open(consumer)
                .where(OutboxEvent.seq > consumer_cursor(session, consumer.name, consumer.names))
                .where(
                    ~exists().where(
                        and_(
                            DeliveryFailure.consumer == consumer.name,
                            DeliveryFailure.event_id == OutboxEvent.event_id,
                            DeliveryFailure.next_attempt_at > self.clock(),
                        )
                    )
                )
                .order_by(OutboxEvent.seq)
                .limit(limit)
            )
            return [EventRecord.from_row(row) for row in session.scalars(query)]

    @property
    def _ordered(self) -> bool:
        """Whether this store keeps cursors: its commits number their events in
        commit order (SQLite)."""
        return commits_in_seq_order(self.store.dialect)

    def _advance(self, session: Session, consumer: Consumer) -> None:
        """In a write transaction: move the cursor up to just below the consumer's first event not
        in its inbox (a failed one holds it there), or to the last event when there is none. Only
        where commits are in sequence order: no event below the cursor can be committed later."""
        if not self._ordered:
            return
        cursor = session.get(OutboxCursor, consumer.name)
        start = consumer_cursor(session, consumer.name, consumer.names)
        first_open = session.scalar(
            _open(consumer)
            .with_only_columns(func.min(OutboxEvent.seq))
            .where(OutboxEvent.seq > start)
        )
        top = (
            first_open - 1
            if first_open is not None
            else session.scalar(select(func.max(OutboxEvent.seq))) or 0
        )
        if top <= start:
            return
        if cursor is None:
            session.add(
                OutboxCursor(consumer=consumer.name, seq=top, names=_names_key(consumer.names))
            )
        else:
            cursor.seq, cursor.names = top, _names_key(consumer.names)

    def _catch_up(self, consumer: Consumer) -> None:
        """Advance a cursor that lags far behind the last event though nothing was delivered (a
        consumer of rare events), so the next pass does not read again what this one passed over."""
        if not self._ordered:
            return
        with self.store.read() as session:
            last = session.scalar(select(func.max(OutboxEvent.seq))) or 0
            behind = last - consumer_cursor(session, consumer.name, consumer.names)
        if behind > CATCH_UP_AFTER:
            with self.store.write() as session:
                self._advance(session, consumer)

    def deliver(self, consumer: Consumer, event: EventRecord) -> Outcome:
        """Deliver one event to one consumer, exactly once in effect."""
        try:
            with self.store.write() as session:
                if session.get(InboxEntry, (consumer.name, event.event_id)) is not None:
                    return Outcome.DUPLICATE
                session.add(
                    InboxEntry(
                        consumer=consumer.name, event_id=event.event_id, processed_at=self.clock()
                    )
                )
                session.flush()
                consumer.handler(event, session)
                failure = session.get(DeliveryFailure, (consumer.name, event.event_id))
                if failure is not None:
                    session.delete(failure)
                self._advance(session, consumer)
        except IntegrityError:
            return Outcome.DUPLICATE  # another dispatcher recorded it first
        except Exception as exc:  # a consumer's bug must not stop the others
            if full := disk_full(exc, UNDELIVERED):
                # no consumer can write now, nor can its failure be recorded: the pass stops and
                # the event waits for the next one
                raise full from exc
            log.warning("consumer %s failed on event %s: %s", consumer.name, event.seq, exc)
            self._record_failure(consumer, event, exc)
            return Outcome.FAILED
        return Outcome.HANDLED

    def _record_failure(self, consumer: Consumer, event: EventRecord, exc: Exception) -> None:
        with self.store.write() as session:
            failure = session.get(DeliveryFailure, (consumer.name, event.event_id))
            if failure is None:
                failure = DeliveryFailure(
                    consumer=consumer.name, event_id=event.event_id, attempts=0
                )
                session.add(failure)
            failure.attempts += 1
            failure.last_error = f"{type(exc).__name__}: {exc}"
            failure.next_attempt_at = self.clock() + retry_delay(failure.attempts)

    def dispatch_once(self) -> dict[Outcome, int]:
        """One pass over every consumer; returns how many deliveries had each outcome."""
        counts = dict.fromkeys(Outcome, 0)
        for consumer in list(self.consumers.values()):
            events = self.pending(consumer, self.batch)
            for event in events:
                counts[self.deliver(consumer, event)] += 1
            if not events:
                self._catch_up(consumer)
        return counts

    def dispatch_all(self) -> dict[Outcome, int]:
        """Pass after pass until a pass hands nothing new to any consumer: every event
        deliverable now is delivered (a consumer that keeps failing waits for its retry time and
        does not hold this up)."""
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
            rows = session.scalars(
                select(DeliveryFailure).order_by(DeliveryFailure.next_attempt_at)
            )
            return [
                FailureInfo(r.consumer, r.event_id, r.attempts, r.last_error, r.next_attempt_at)
                for r in rows
            ]


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
            except DiskFullError as exc:  # the events wait: tried again at the next poll
                log.warning("event dispatch paused: %s", exc.message)
            except Exception:  # keep delivering after a transient database error
                log.exception("event dispatch pass failed; retrying")

    def _announce_new(self) -> None:
        for event in events_after(self.dispatcher.store, self._last_seq):
            self._last_seq = event.seq
            for listener in list(self.listeners):
                listener(event)


def consumer_cursor(session: Session, consumer: str, names: Iterable[str] | None) -> int:
    """Every event up to this number is in the inbox of ``consumer`` taking ``names`` (None: all),
    or not one it takes (0: none is known to be; always on PostgreSQL, which keeps no cursors). A
    cursor kept while the consumer took other names does not count: events it passed over may be
    ones the consumer takes now."""
    row = session.get(OutboxCursor, consumer)
    return row.seq if row is not None and row.names == _names_key(names) else 0


def _names_key(names: Iterable[str] | None) -> str:
    return "*" if names is None else json.dumps(sorted(names))


def _open(consumer: Consumer) -> Select[OutboxEvent]:
    """The consumer's events that are not in its inbox."""
    query = select(OutboxEvent).where(
        ~exists().where(
            and_(InboxEntry.consumer == consumer.name, InboxEntry.event_id == OutboxEvent.event_id)
        )
    )
    return (
        query.where(OutboxEvent.name.in_(consumer.names)) if consumer.names is not None else query
    )


def _last_seq(store: Store) -> int:
    with store.read() as session:
        return (
            session.scalar(select(OutboxEvent.seq).order_by(OutboxEvent.seq.desc()).limit(1)) or 0
        )


def events_after(store: Store, seq: int, limit: int = 1000) -> list[EventRecord]:
    """Recorded events with a sequence number above ``seq``, in order."""
    with store.read() as session:
        rows = session.scalars(
            select(OutboxEvent).where(OutboxEvent.seq > seq).order_by(OutboxEvent.seq).limit(limit)
        )
        return [EventRecord.from_row(row) for row in rows]
