"""Where each consumer's deliveries stand, so a pass reads the outbox from there on instead of from
the first event ever recorded, and who delivers a consumer's events now.

A cursor is a promise about the outbox: every event below it is in the consumer's inbox or not one
it takes. It moves in the delivery's own transaction, never past the consumer's first event still
open (a failing one holds it), and it must never pass an event that will still be committed. The
two databases keep that promise differently:

- **SQLite** (:class:`SeqCursors`) runs one write transaction at a time, so each commit's events
  are numbered above every earlier commit's: the cursor is an event number (``seq``).
- **PostgreSQL** (:class:`TransactionCursors`) commits side by side, and a transaction that drew a
  lower ``seq`` may commit after one that drew a higher (a cursor on ``seq`` would skip it for
  ever). There each event carries the id of the transaction that wrote it (``txid``, migration
  0016), and the cursor is a transaction id: every transaction below the oldest one still running
  (``pg_snapshot_xmin``, read *before* the events are) has ended, so all of its events are
  visible. The cursor never passes that horizon, however far the numbers run ahead.

PostgreSQL's dispatchers in several processes also claim a consumer's deliveries: the consumer's
cursor row is locked ``FOR UPDATE SKIP LOCKED`` for the delivering transaction, so two publishers
never do the same work (a dispatcher finding it locked goes on to the next consumer). SQLite's
write transactions are already one at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import (
    ColumnElement,
    Exists,
    Select,
    func,
    literal,
    literal_column,
    select,
    text,
)
from sqlalchemy.orm import InstrumentedAttribute, Session

from labrig.store import Store
from labrig.store.dialects import postgresql as pg
from labrig.store.models import InboxEntry, OutboxCursor, OutboxEvent

#: a consumer whose cursor lags this far behind (events on SQLite, transactions on PostgreSQL)
#: with nothing to deliver has it moved up, so later passes do not read again what it passed over;
#: nearer, moving it is not worth a write
CATCH_UP_AFTER = 500


class ConsumerLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def names(self) -> frozenset[str] | None: ...


class Cursors(Protocol):
    """One database's cursors (see the module's docstring)."""

    def unread(self, session: Session, consumer: ConsumerLike) -> ColumnElement[bool]:
        """The outbox rows at or after the consumer's cursor (a ``WHERE`` clause)."""

    def unread_from(self, position: ColumnElement[int]) -> ColumnElement[bool]:
        """The outbox rows at or after a cursor at ``position`` (a ``WHERE`` clause)."""

    def kept(self, consumer: ConsumerLike) -> ColumnElement[int]:
        """The consumer's cursor, read by the statement it is part of (a scalar subquery; 0 when
        none is kept for the names it takes now)."""

    def top(self) -> ColumnElement[int]:
        """How far a cursor could move now, as a column (the newest event's number, or the oldest
        transaction running): a cursor more than :data:`CATCH_UP_AFTER` below it lags behind."""

    def ensure(self, store: Store, consumer: ConsumerLike) -> None:
        """Before the consumer's first :meth:`claim`, in a write transaction of its own: make the
        row a claim locks, if this database keeps one."""

    def claim(self, session: Session, consumer: ConsumerLike, *, wait: bool) -> bool:
        """In a write transaction, before anything is read: take the consumer's deliveries for this
        transaction. False: another dispatcher has them now (``wait``: wait for it instead)."""

    def horizon(self, session: Session) -> int | None:
        """After :meth:`claim`, before the events are read: how far the cursor may move in this
        transaction, whatever it reads next (None: no limit but the events themselves)."""

    def advance(self, session: Session, consumer: ConsumerLike, horizon: int | None) -> None:
        """In the claiming transaction, after delivering: move the cursor up to the consumer's first
        event still open, or to the horizon."""


def cursors_for(dialect: str) -> Cursors:
    return TransactionCursors() if dialect == "postgresql" else SeqCursors()


def probed(query: Select[Any]) -> Exists:
    """``EXISTS (query)`` run as a lookup for each row of the outer query (a key's probe), never
    turned into a join. PostgreSQL would otherwise join a consumer's whole inbox (or failures)
    to the events read when its statistics are missing or stale (a new catalog's, for a minute
    or more): it took the inbox for one row, read all of it and compared each event with each
    entry. A subquery with an OFFSET is not pulled up into a join; OFFSET 0 skips nothing."""
    return query.offset(0).exists()


def open_events(consumer: ConsumerLike) -> Select[OutboxEvent]:
    """The consumer's events that are not in its inbox."""
    query = select(OutboxEvent).where(
        ~probed(
            select(InboxEntry.event_id).where(
                InboxEntry.consumer == consumer.name, InboxEntry.event_id == OutboxEvent.event_id
            )
        )
    )
    return (
        query.where(OutboxEvent.name.in_(consumer.names)) if consumer.names is not None else query
    )


def names_key(names: Iterable[str] | None) -> str:
    """The cursor row's record of the names its consumer took: "*" (all) or a sorted JSON list."""
    return "*" if names is None else json.dumps(sorted(names))


def _row(session: Session, consumer: ConsumerLike) -> OutboxCursor | None:
    """The consumer's cursor row, if it was kept while the consumer took the names it takes now
    (events passed over for other names may be ones it takes now)."""
    row = session.get(OutboxCursor, consumer.name)
    return row if row is not None and row.names == names_key(consumer.names) else None


def consumer_cursor(session: Session, consumer: str, names: Iterable[str] | None) -> int:
    """SQLite: every event up to this number is in the inbox of ``consumer`` taking ``names`` (None:
    all), or not one it takes (0: none is known to be)."""
    row = session.get(OutboxCursor, consumer)
    return row.seq if row is not None and row.names == names_key(names) else 0


@dataclass(frozen=True)
class _Named:
    name: str
    names: frozenset[str] | None


def unread_by(session: Session, consumer: str, names: Iterable[str] | None) -> ColumnElement[bool]:
    """The outbox rows at or after the cursor of ``consumer`` taking ``names`` (None: all), on the
    session's database: the events a count of what it has not handled needs to look at."""
    named = _Named(consumer, frozenset(names) if names is not None else None)
    return cursors_for(session.get_bind().dialect.name).unread(session, named)


def _kept(column: InstrumentedAttribute[int | None], consumer: ConsumerLike) -> ColumnElement[int]:
    return (
        select(func.coalesce(func.max(column), 0))
        .where(OutboxCursor.consumer == consumer.name)
        .where(OutboxCursor.names == names_key(consumer.names))
        .scalar_subquery()
    )


class SeqCursors:
    """SQLite: the cursor is an event number."""

    def unread(self, session: Session, consumer: ConsumerLike) -> ColumnElement[bool]:
        return self.unread_from(literal(consumer_cursor(session, consumer.name, consumer.names)))

    def unread_from(self, position: ColumnElement[int]) -> ColumnElement[bool]:
        return OutboxEvent.seq > position

    def kept(self, consumer: ConsumerLike) -> ColumnElement[int]:
        return _kept(OutboxCursor.seq, consumer)

    def top(self) -> ColumnElement[int]:
        return select(func.coalesce(func.max(OutboxEvent.seq), 0)).scalar_subquery()

    def ensure(self, store: Store, consumer: ConsumerLike) -> None:
        pass  # the cursor row is made when it first moves

    def claim(self, session: Session, consumer: ConsumerLike, *, wait: bool) -> bool:
        return True  # BEGIN IMMEDIATE: this is the only write transaction now

    def horizon(self, session: Session) -> int | None:
        return None

    def advance(self, session: Session, consumer: ConsumerLike, horizon: int | None) -> None:
        start = consumer_cursor(session, consumer.name, consumer.names)
        first_open = session.scalar(
            open_events(consumer)
            .with_only_columns(func.min(OutboxEvent.seq))
            .where(OutboxEvent.seq > start)
        )
        top = (
            first_open - 1
            if first_open is not None
            else session.scalar(select(func.max(OutboxEvent.seq))) or 0
        )
        if top > start:
            _move(session, consumer, seq=top)


class TransactionCursors:
    """PostgreSQL: the cursor is a transaction id, never above the oldest transaction running."""

    @staticmethod
    def position(session: Session, consumer: ConsumerLike) -> int:
        """Every event written by a transaction below this id is in the consumer's inbox or not one
        it takes (0: none is known to be)."""
        row = _row(session, consumer)
        return row.txid or 0 if row is not None else 0

    def unread(self, session: Session, consumer: ConsumerLike) -> ColumnElement[bool]:
        return self.unread_from(literal(self.position(session, consumer)))

    def unread_from(self, position: ColumnElement[int]) -> ColumnElement[bool]:
        return OutboxEvent.txid >= position

    def kept(self, consumer: ConsumerLike) -> ColumnElement[int]:
        return _kept(OutboxCursor.txid, consumer)

    def top(self) -> ColumnElement[int]:
        return literal_column(pg.SNAPSHOT_XMIN_VALUE)

    def ensure(self, store: Store, consumer: ConsumerLike) -> None:
        # committed apart: a claim finding no row would make it, and a second dispatcher's would
        # then wait for the first's whole batch on that uncommitted row
        with store.write() as session:
            session.execute(
                text(pg.ENSURE_CURSOR),
                {"consumer": consumer.name, "names": names_key(consumer.names)},
            )

    def claim(self, session: Session, consumer: ConsumerLike, *, wait: bool) -> bool:
        lock = text(pg.LOCK_CURSOR if wait else pg.CLAIM_CURSOR)
        locked = session.execute(lock, {"consumer": consumer.name}).first() is not None
        if locked:
            session.expire_all()  # read the row as locked, not as an earlier statement saw it
        return locked

    def horizon(self, session: Session) -> int | None:
        return int(session.scalar(text(pg.SNAPSHOT_XMIN)))

    def advance(self, session: Session, consumer: ConsumerLike, horizon: int | None) -> None:
        assert horizon is not None, "a transaction cursor moves only up to a horizon read first"
        start = self.position(session, consumer)
        first_open = session.scalar(
            open_events(consumer)
            .with_only_columns(func.min(OutboxEvent.txid))
            .where(OutboxEvent.txid >= start)
        )
        top = min(horizon, first_open) if first_open is not None else horizon
        if top > start:
            _move(session, consumer, seq=0, txid=top)


def _move(session: Session, consumer: ConsumerLike, *, seq: int, txid: int | None = None) -> None:
    row = session.get(OutboxCursor, consumer.name)
    if row is None:
        session.add(
            OutboxCursor(
                consumer=consumer.name, seq=seq, names=names_key(consumer.names), txid=txid
            )
        )
    else:
        row.seq, row.names, row.txid = seq, names_key(consumer.names), txid
