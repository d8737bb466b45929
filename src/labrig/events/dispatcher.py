"""At-least-once delivery from the outbox to idempotent consumers.

Each consumer has a durable inbox: the id of every event it handled, written in
the same transaction as the consumer's own changes. A redelivery (a second
dispatcher, a crash before the commit, a restart) finds the id and changes
nothing. A consumer that raises has its failure recorded and is retried after
a backoff, while other consumers (and its own later events) go on.

A pass delivers each consumer's events in batches, one write transaction per
batch, and reads the outbox from the consumer's cursor on, which moves in the
same transaction (``labrig.events.cursors``: on SQLite an event number, on
PostgreSQL a transaction id, safe there though commits land out of number
order). On PostgreSQL the batch first claims the consumer's deliveries, so
dispatchers in several processes never deliver the same events side by side.

A batch is delivered whole, in one savepoint, its inbox entries written in one statement (two
statements a batch, where a savepoint of each event's own took four an event). Should a handler
raise, that savepoint is rolled back: the events before it are delivered again one by one, each in
a savepoint of its own, its failure is recorded (it is not called again before its retry time),
and the events after it go on as a whole. Should an inbox entry be there already (another
dispatcher delivered it), the batch goes one by one. The handlers' changes are the same either
way: a handler's writes are kept only with its event's inbox entry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from labrig.events.cursors import CATCH_UP_AFTER, Cursors, cursors_for, open_events
from labrig.events.failures import (
    FailureInfo,
    failures,
    forget_failures,
    record_failure,
    waiting,
)
from labrig.events.outbox import EventRecord
from labrig.fsutil import DiskFullError, disk_full
from labrig.store import Store, utcnow
from labrig.store.models import InboxEntry, OutboxEvent

log = logging.getLogger(__name__)

Handler = Callable[[EventRecord, Session], None]
#: reads, in a few statements, what a consumer's handler will read of a batch of events, into the
#: session; what it returns is kept while the batch is handled (the session's identity map holds
#: the objects it loaded only as long as something else does)
Prefetch = Callable[[Sequence[EventRecord], Session], object]
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
    """A named, durable consumer. ``names`` limits it to some events (None: all); ``prefetch``,
    given a batch before it is handled, reads what the handler will (into the session)."""

    name: str
    handler: Handler
    names: frozenset[str] | None = None
    prefetch: Prefetch | None = None


class _Duplicate(Exception):
    """The event is in the consumer's inbox already (another dispatcher recorded it first)."""


#: how many events one delivering transaction takes unless told: on SQLite it holds the one write
#: lock meanwhile, so a few; on PostgreSQL only the consumer's cursor, so a whole pass's batch (each
#: transaction is a dozen statements: 2,000 events took 0.15 s of CPU in batches of 200, 0.25 s
#: in batches of 50)
PER_TRANSACTION = {"sqlite": 50, "postgresql": 200}


@dataclass
class Dispatcher:
    """Delivers pending outbox events to registered consumers.

    ``batch``: the events a pass hands each consumer at most; ``per_transaction``: how many of them
    one write transaction delivers (0: the database's :data:`PER_TRANSACTION`).

    Threading: ``dispatch_once`` may run on any thread; handlers run on that
    thread, in the batch's write transaction.
    """

    store: Store
    batch: int = 200
    consumers: dict[str, Consumer] = field(default_factory=dict)
    clock: Callable[[], datetime] = utcnow
    per_transaction: int = 0
    cursors: Cursors = field(init=False)
    #: consumers whose cursor row is known to exist
    _ensured: set[str] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        self.cursors = cursors_for(self.store.dialect)
        self.per_transaction = self.per_transaction or PER_TRANSACTION[self.store.dialect]

    def register(
        self,
        name: str,
        handler: Handler,
        names: Iterable[str] | None = None,
        prefetch: Prefetch | None = None,
    ) -> None:
        self.consumers[name] = Consumer(
            name, handler, frozenset(names) if names is not None else None, prefetch
        )

    def _due(self, consumer: Consumer, unread: ColumnElement[bool]) -> Select[OutboxEvent]:
        """The consumer's events in ``unread`` that it has not processed and whose retry time has
        come."""
        return open_events(consumer).where(unread).where(~waiting(consumer.name, self.clock()))

    def _pending_in(self, session: Session, consumer: Consumer, limit: int) -> list[EventRecord]:
        query = (
            self._due(consumer, self.cursors.unread(session, consumer))
            .order_by(OutboxEvent.seq)
            .limit(limit)
        )
        return [EventRecord.from_row(row) for row in session.scalars(query)]

    def _survey(self, consumers: list[Consumer]) -> list[tuple[bool, bool]]:
        """For each consumer, in one statement: whether it has an event to take now, and whether
        its cursor lags behind (:data:`~labrig.events.cursors.CATCH_UP_AFTER`). An idle pass is
        this one read."""
        columns: list[ColumnElement[Any]] = [self.cursors.top()]
        for consumer in consumers:
            kept = self.cursors.kept(consumer)
            columns += [self._due(consumer, self.cursors.unread_from(kept)).exists(), kept]
        statement = select(*columns)
        with self.store.engine.connect() as conn:
            if self.store.dialect == "postgresql":  # one statement: no BEGIN nor ROLLBACK
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                top, *row = _unprepared(conn, statement)
            else:
                top, *row = conn.execute(statement).one()
        return [
            (bool(due), top - kept > CATCH_UP_AFTER)
            for due, kept in zip(row[::2], row[1::2], strict=True)
        ]

    def pending(self, consumer: Consumer, limit: int) -> list[EventRecord]:
        """Events the consumer has not processed and whose retry time has come (from its cursor
        on), in number order."""
        with self.store.read() as session:
            return self._pending_in(session, consumer, limit)

    def deliver(self, consumer: Consumer, event: EventRecord) -> Outcome:
        """Deliver one event to one consumer, exactly once in effect (its cursor moves at the next
        pass)."""
        with _no_room_stops_the_pass(), self.store.write() as session:
            if session.get(InboxEntry, (consumer.name, event.event_id)) is not None:
                return Outcome.DUPLICATE
            outcome = self._deliver_in(session, consumer, event)
            if outcome is Outcome.HANDLED:
                forget_failures(session, consumer.name, [event.event_id])
            return outcome

    def deliver_pending(
        self, consumer: Consumer, limit: int | None = None, *, wait: bool = False
    ) -> dict[Outcome, int]:
        """One write transaction: claim the consumer's deliveries, deliver up to ``limit`` (else
        ``per_transaction``) of its pending events, move its cursor. Nothing when another
        dispatcher has its deliveries now (``wait``: wait for it instead)."""
        counts = dict.fromkeys(Outcome, 0)
        if consumer.name not in self._ensured:
            with _no_room_stops_the_pass():
                self.cursors.ensure(self.store, consumer)
            self._ensured.add(consumer.name)
        with _no_room_stops_the_pass(), self.store.write() as session:
            if not self.cursors.claim(session, consumer, wait=wait):
                return counts
            horizon = self.cursors.horizon(session)
            events = self._pending_in(session, consumer, limit or self.per_transaction)
            handled = self._deliver_all(session, consumer, events, counts)
            forget_failures(session, consumer.name, (e.event_id for e in handled))
            self.cursors.advance(session, consumer, horizon)
        return counts

    def _deliver_all(
        self,
        session: Session,
        consumer: Consumer,
        events: list[EventRecord],
        counts: dict[Outcome, int],
    ) -> list[EventRecord]:
        """In a write transaction: ``events`` delivered as a whole while they can be (see the
        module); those handled. A handler that raises has its event's failure recorded (it is not
        called again in this pass); the events before it are delivered again one by one, those
        after it as a whole again."""
        handled: list[EventRecord] = []
        rest = events
        while rest:
            stopped = self._deliver_whole(session, consumer, rest)
            if stopped is None:
                handled += rest
                counts[Outcome.HANDLED] += len(rest)
                break
            at, exc = stopped
            for event in rest if at is None else rest[:at]:  # None: an entry was there already
                outcome = self._deliver_in(session, consumer, event)
                counts[outcome] += 1
                if outcome is Outcome.HANDLED:
                    handled.append(event)
            if at is None:
                break
            self._failed(session, consumer, rest[at], exc)
            counts[Outcome.FAILED] += 1
            rest = rest[at + 1 :]
        return handled

    def _deliver_whole(
        self, session: Session, consumer: Consumer, events: list[EventRecord]
    ) -> tuple[int | None, Exception] | None:
        """In a write transaction: every event of ``events`` handled and put in the inbox, in one
        savepoint (None). Else nothing of it is kept, and this says where it stopped: the index of
        the event whose handler raised and what it raised, or None and the inbox's refusal when
        an event was in the inbox already."""
        at: int | None = None
        try:
            with session.begin_nested():
                kept = consumer.prefetch(events, session) if consumer.prefetch else None
                for at, event in enumerate(events):  # noqa: B007 - where it stopped, if it did
                    consumer.handler(event, session)
                at = None
                now = self.clock()
                session.execute(
                    insert(InboxEntry),
                    [
                        {"consumer": consumer.name, "event_id": e.event_id, "processed_at": now}
                        for e in events
                    ],
                )
                del kept
        except Exception as exc:  # a consumer's bug, or a duplicate
            if full := disk_full(exc, UNDELIVERED):
                raise full from exc
            return at, exc
        return None

    def _deliver_in(self, session: Session, consumer: Consumer, event: EventRecord) -> Outcome:
        """In a write transaction: the inbox entry and the handler's changes, in a savepoint that is
        rolled back alone if the handler raises (its failure is then recorded)."""
        try:
            with session.begin_nested():
                session.add(
                    InboxEntry(
                        consumer=consumer.name, event_id=event.event_id, processed_at=self.clock()
                    )
                )
                try:
                    session.flush()
                except IntegrityError as exc:
                    raise _Duplicate from exc
                consumer.handler(event, session)
                session.flush()
        except _Duplicate:
            return Outcome.DUPLICATE
        except Exception as exc:  # a consumer's bug must not stop the others
            if full := disk_full(exc, UNDELIVERED):
                # no consumer can write now, nor can its failure be recorded: the pass stops and
                # the batch waits for the next one
                raise full from exc
            self._failed(session, consumer, event, exc)
            return Outcome.FAILED
        return Outcome.HANDLED

    def _failed(
        self, session: Session, consumer: Consumer, event: EventRecord, exc: Exception
    ) -> None:
        log.warning("consumer %s failed on event %s: %s", consumer.name, event.seq, exc)
        record_failure(session, consumer.name, event.event_id, exc, self.clock())

    def dispatch_once(self, *, wait: bool = False) -> dict[Outcome, int]:
        """One pass over every consumer: up to ``batch`` events each, those due when the pass reads
        them; how many deliveries had each outcome. A consumer whose events another dispatcher is
        delivering now is passed over (``wait``: waited for).

        A consumer's deliveries end at the first transaction that found fewer events than it could
        take: what commits after that waits for the next pass. (A pass that went on while a worker
        committed a job or two at a time spent a transaction on each, six times the CPU its events
        took in batches.)"""
        counts = dict.fromkeys(Outcome, 0)
        consumers = list(self.consumers.values())
        for consumer, (due, behind) in zip(consumers, self._survey(consumers), strict=True):
            if not due:  # no write transaction when idle
                if behind:  # a consumer of rare events: its cursor is moved up (nothing delivered)
                    self.deliver_pending(consumer)  # so later passes do not read again what it
                continue  # passed over
            given = 0
            while given < self.batch:
                asked = min(self.per_transaction, self.batch - given)
                done = self.deliver_pending(consumer, asked, wait=wait)
                for outcome, n in done.items():
                    counts[outcome] += n
                taken = sum(done.values())
                given += taken
                if taken < asked:  # it has every event that was due: the rest is newer
                    break
        return counts

    def dispatch_all(self) -> dict[Outcome, int]:
        """Pass after pass until a pass hands nothing new to any consumer: every event
        deliverable now is delivered, waiting for other dispatchers delivering some (a consumer
        that keeps failing waits for its retry time and does not hold this up)."""
        total = dict.fromkeys(Outcome, 0)
        while True:
            counts = self.dispatch_once(wait=True)
            for outcome, n in counts.items():
                total[outcome] += n
            if not counts[Outcome.HANDLED] and not counts[Outcome.DUPLICATE]:
                return total

    def failures(self) -> list[FailureInfo]:
        """Deliveries waiting for a retry, soonest first."""
        with self.store.read() as session:
            return failures(session)


def _unprepared(conn: Connection, statement: Select[Any]) -> Sequence[Any]:
    """``statement``'s one row, run on PostgreSQL without being prepared. psycopg prepares a
    statement after its fifth run; PostgreSQL then plans it without its parameters (the
    consumers' event names, the clock) and, on an outbox of 3,000,000 events, that plan reads
    the whole outbox: the idle pass went from 2 ms to 300 ms at its eleventh run."""
    driver: Any = conn.connection.driver_connection
    threshold, driver.prepare_threshold = driver.prepare_threshold, None
    try:
        return conn.execute(statement).one()
    finally:
        driver.prepare_threshold = threshold


@contextmanager
def _no_room_stops_the_pass() -> Iterator[None]:
    """A write the full disk refused, its commit included, stops the pass with the typed refusal:
    no delivery can be recorded now, and the events wait for the next pass."""
    try:
        yield
    except DiskFullError:
        raise
    except Exception as exc:
        if full := disk_full(exc, UNDELIVERED):
            raise full from exc
        raise
