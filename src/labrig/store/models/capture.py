"""Media and what was recorded: blobs, verified devices, sessions, captures and their
segments, attempts."""

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from labrig.store.models.base import Base
from labrig.store.types import UTCDateTime


class Blob(Base):
    """A file in the content-addressed media store (media/<aa>/<sha256><ext>)."""

    __tablename__ = "blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    ext: Mapped[str] = mapped_column(String(16))
    size: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(32))  # media, timestamps or manifest
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    #: when ``labrig verify`` last found it whole (None: not since migration 0017)
    verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), index=True)


class DeviceRecord(Base):
    """The last verification of a device: passed (with its mode) or refused (with its reason)."""

    __tablename__ = "devices"

    device_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(Text)
    info: Mapped[str] = mapped_column(Text)  # DeviceInfo as JSON
    verified: Mapped[bool] = mapped_column(Boolean)
    inventory_entry: Mapped[str | None] = mapped_column(String(128))
    mode: Mapped[str | None] = mapped_column(Text)  # verified mode as JSON
    measured_fps: Mapped[float | None] = mapped_column(Float)
    reason_code: Mapped[str | None] = mapped_column(String(64))
    reason: Mapped[str | None] = mapped_column(Text)
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime())


class CaptureSession(Base):
    """One sitting of captures for one subject or specimen, protocol and technician."""

    __tablename__ = "sessions"
    # the attempts in subject or protocol order, session by session (migration 0023)
    __table_args__ = (
        Index("ix_sessions_subject", "subject_code", "id"),
        Index("ix_sessions_protocol", "protocol", "id"),
        Index("ix_sessions_created_at", "created_at", "id"),  # by date (migration 0024)
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    subject_code: Mapped[str] = mapped_column(String(128), index=True)
    protocol: Mapped[str] = mapped_column(String(128))
    operator: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Capture(Base):
    """One recording from one device. ``state``: provisional, committed, salvaged,
    quarantined, abandoned."""

    __tablename__ = "captures"
    # `labrig captures` by date (migration 0020)
    __table_args__ = (
        Index("ix_captures_started_at", "started_at", "id"),
        Index("ix_captures_state_started", "state", "started_at", "id"),  # migration 0021
        Index("ix_captures_device", "device_id", "id"),  # a device's attempts (migration 0023)
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    session_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("sessions.id"), index=True
    )
    device_id: Mapped[str] = mapped_column(String(255))
    origin: Mapped[str] = mapped_column(String(32))  # recorded, imported, watch_folder
    state: Mapped[str] = mapped_column(String(32), index=True)
    mode: Mapped[str] = mapped_column(Text)
    verification: Mapped[str] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    committed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    frame_count: Mapped[int] = mapped_column(Integer, default=0)
    dropped_frames: Mapped[int] = mapped_column(Integer, default=0)
    manifest_sha256: Mapped[str | None] = mapped_column(String(64))
    provisional_dir: Mapped[str | None] = mapped_column(Text)
    report: Mapped[str | None] = mapped_column(Text)  # gap or salvage report, JSON
    # imported file's digest
    source_sha256: Mapped[str | None] = mapped_column(String(64), index=True)
    # a RecordingPurpose (attempt, board, plane); None before migration 0012 and for imports
    purpose: Mapped[str | None] = mapped_column(String(16))


class ImportedSource(Base):
    """Each imported file's digest, once: the catalog's own guard that two imports of the same file
    started at the same moment commit it once (the loser is refused, LABRIG_ALREADY_IMPORTED)."""

    __tablename__ = "imported_sources"

    source_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    capture_id: Mapped[str] = mapped_column(String(36), ForeignKey("captures.id"))


class CaptureSegment(Base):
    __tablename__ = "capture_segments"

    capture_id: Mapped[str] = mapped_column(String(36), ForeignKey("captures.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    media_sha256: Mapped[str] = mapped_column(String(64), ForeignKey("blobs.sha256"))
    timestamps_sha256: Mapped[str | None] = mapped_column(String(64), ForeignKey("blobs.sha256"))
    frames: Mapped[int] = mapped_column(Integer)
    first_mono_ns: Mapped[int] = mapped_column(BigInteger)
    last_mono_ns: Mapped[int] = mapped_column(BigInteger)


class Attempt(Base):
    """One trial of a session: its committed captures; creating it requests its analysis."""

    __tablename__ = "attempts"
    # pages in the order of a column of the Results screen, and of one status (migration 0023)
    __table_args__ = (
        Index("ix_attempts_result_status", "result_status", "created_at", "id"),
        Index("ix_attempts_number", "number", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    session_id: Mapped[str] = mapped_column(String(36), ForeignKey("sessions.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    # why it is not a normal attempt (its recording was interrupted); None for most
    note: Mapped[str | None] = mapped_column(Text)
    # its newest result's status (published, degraded, blocked), pending while it has none: set
    # by a trigger when a result is stored (migration 0023)
    result_status: Mapped[str] = mapped_column(
        String(16), default="pending", server_default="pending"
    )


class AttemptCapture(Base):
    __tablename__ = "attempt_captures"
    # the attempts of a device's captures (migration 0023)
    __table_args__ = (Index("ix_attempt_captures_capture", "capture_id", "attempt_id"),)

    attempt_id: Mapped[str] = mapped_column(String(36), ForeignKey("attempts.id"), primary_key=True)
    capture_id: Mapped[str] = mapped_column(String(36), ForeignKey("captures.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
