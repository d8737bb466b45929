"""Rigs: named sets of devices recorded together, and each recording of one."""

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from labrig.store.models.base import Base
from labrig.store.types import UTCDateTime


class RigRecord(Base):
    """A rig a technician made (the built-in ``virtual`` rig is not stored)."""

    __tablename__ = "rigs"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[str] = mapped_column(String(255))


class RigDeviceRecord(Base):
    """One device of a rig, in the mode it records in, with its position name (``front``)."""

    __tablename__ = "rig_devices"

    rig_name: Mapped[str] = mapped_column(
        String(64), ForeignKey("rigs.name", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    device_id: Mapped[str] = mapped_column(String(255))
    mode: Mapped[str] = mapped_column(Text)  # the mode as JSON
    place: Mapped[str] = mapped_column(String(64))  # where it stands: front, left, cam3 …


class RigRecording(Base):
    """One recording of a rig: its captures, how each device ended, the sync figures, and the
    attempt it became (None while recording, or when it was not saved as one)."""

    __tablename__ = "rig_recordings"
    # a rig's attempts (migration 0023)
    __table_args__ = (Index("ix_rig_recordings_rig", "rig_name", "attempt_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    rig_name: Mapped[str] = mapped_column(String(64))
    session_id: Mapped[str] = mapped_column(String(36), ForeignKey("sessions.id"))
    # recording, saved, interrupted; ix_rig_recordings_unsaved: those recording (migration 0022)
    state: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # [{"device_id", "place", "mode", "capture_id", "stopped": null | {"reason", "after_s"}}]
    devices: Mapped[str] = mapped_column(Text)
    sync: Mapped[str | None] = mapped_column(Text)  # the sync figures as JSON, once stopped
    attempt_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("attempts.id"), index=True
    )
