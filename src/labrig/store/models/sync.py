"""Copying to the archive: the destination, the objects, their acknowledgements, failures
and batches."""

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from labrig.store.models.base import Base
from labrig.store.types import UTCDateTime


class SyncDestination(Base):
    """A sync destination configuration; the latest row is the one in force (earlier rows
    are its history).

    ``destination_id`` identifies the archive itself (it is also written in the folder's marker
    file), so two workstations syncing into one share, or a re-configuration to the same share,
    count the same acknowledgements.
    """

    __tablename__ = "sync_destinations"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    destination_id: Mapped[str] = mapped_column(String(36), index=True)
    name: Mapped[str] = mapped_column(String(128))  # the name events and status use
    kind: Mapped[str] = mapped_column(String(16))  # folder
    location: Mapped[str] = mapped_column(Text)  # the folder (a network share path)
    configured_by: Mapped[str] = mapped_column(String(128))
    configured_at: Mapped[datetime] = mapped_column(UTCDateTime())


class SyncObject(Base):
    """An object sync copies: a committed blob, a capture manifest, or a published
    result's sync manifest.

    Indexed from the outbox by the sync consumer; immutable (named by its SHA-256). ``body`` holds
    the bytes of objects that are not files in the media store (result manifests).
    """

    __tablename__ = "sync_objects"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # blob or manifest (the event's object_kind)
    # media, timestamps, capture-manifest or result
    content: Mapped[str] = mapped_column(String(32))
    ext: Mapped[str] = mapped_column(String(16))  # file extension at the destination, e.g. .avi
    size: Mapped[int] = mapped_column(BigInteger)
    # the capture or result it belongs to
    ref_id: Mapped[str] = mapped_column(String(64), index=True)
    # the object's text when it is not a media-store file
    body: Mapped[str | None] = mapped_column(Text)
    indexed_at: Mapped[datetime] = mapped_column(UTCDateTime())


class SyncAck(Base):
    """A destination confirmed an object: its copy re-hashed to the object's SHA-256.
    Written once."""

    __tablename__ = "sync_acks"

    destination_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    sha256: Mapped[str] = mapped_column(
        String(64), ForeignKey("sync_objects.sha256"), primary_key=True
    )
    destination_name: Mapped[str] = mapped_column(String(128))
    path: Mapped[str] = mapped_column(Text)  # where the copy is, relative to the destination
    batch_id: Mapped[str] = mapped_column(String(36), index=True)
    acknowledged_at: Mapped[datetime] = mapped_column(UTCDateTime())


class SyncFailure(Base):
    """The last failed copy of an object to a destination, retried after
    ``next_attempt_at`` (backoff)."""

    __tablename__ = "sync_failures"

    destination_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    sha256: Mapped[str] = mapped_column(
        String(64), ForeignKey("sync_objects.sha256"), primary_key=True
    )
    attempts: Mapped[int] = mapped_column(Integer)
    last_error: Mapped[str] = mapped_column(Text)
    failed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime())


class SyncBatch(Base):
    """One pass of the sync worker over a destination, with the audit chain head it carried."""

    __tablename__ = "sync_batches"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    destination_id: Mapped[str] = mapped_column(String(36), index=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # audit chain head, read with the batch's object list
    chain_seq: Mapped[int] = mapped_column(Integer)
    chain_hash: Mapped[str] = mapped_column(String(64))
    acknowledged: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    # why the batch stopped early (destination unavailable)
    error: Mapped[str | None] = mapped_column(Text)
    # its record at the destination, relative path
    batch_file: Mapped[str | None] = mapped_column(Text)
