"""The transactional outbox, its consumers' cursors and inboxes, and delivery failures."""

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, FetchedValue, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from labrig.store.models.base import Base
from labrig.store.types import UTCDateTime


class OutboxEvent(Base):
    """One event, written in the transaction of the change that caused it.

    ``seq`` is the global order of recording; ``event_id`` is the identity a
    consumer remembers. ``known`` is false for names outside the seed-000 catalog.
    """

    __tablename__ = "outbox_events"

    seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    event_id: Mapped[str] = mapped_column(String(36), unique=True)
    name: Mapped[str] = mapped_column(String(128))  # indexed on PostgreSQL only (migration 0011)
    schema_version: Mapped[int] = mapped_column(Integer)
    known: Mapped[bool] = mapped_column(Boolean)
    payload: Mapped[str] = mapped_column(Text)
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: PostgreSQL only: the id of the transaction that wrote it, filled by the server
    #: (migration 0016); empty on SQLite
    txid: Mapped[int | None] = mapped_column(BigInteger(), server_default=FetchedValue())


class OutboxCursor(Base):
    """Where a consumer's deliveries stand, so a pass reads the outbox from there on, not from
    the first event ever recorded (``labrig.events.cursors``).

    On SQLite, whose commits are in sequence order: every event up to ``seq`` is in the consumer's
    inbox or not one it takes. On PostgreSQL: every event written by a transaction whose id is below
    ``txid`` is (``seq`` is then 0).
    """

    __tablename__ = "outbox_cursors"

    consumer: Mapped[str] = mapped_column(String(128), primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"))
    # the event names it took then: "*" (all) or a sorted JSON list
    names: Mapped[str] = mapped_column(Text)
    txid: Mapped[int | None] = mapped_column(BigInteger())


class InboxEntry(Base):
    """A consumer's memory that it processed an event: redelivery then changes nothing."""

    __tablename__ = "consumer_inbox"

    consumer: Mapped[str] = mapped_column(String(128), primary_key=True)
    event_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("outbox_events.event_id"), primary_key=True
    )
    processed_at: Mapped[datetime] = mapped_column(UTCDateTime())


class DeliveryFailure(Base):
    """A delivery that raised: retried after ``next_attempt_at`` without blocking
    other consumers."""

    __tablename__ = "delivery_failures"

    consumer: Mapped[str] = mapped_column(String(128), primary_key=True)
    event_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("outbox_events.event_id"), primary_key=True
    )
    attempts: Mapped[int] = mapped_column(Integer)
    last_error: Mapped[str] = mapped_column(Text)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime())
