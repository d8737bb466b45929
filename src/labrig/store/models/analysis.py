"""Calibrations, analysis results, pipeline releases and reviewers' revisions."""

from datetime import datetime

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from labrig.store.models.base import Base
from labrig.store.types import UTCDateTime


class CalibrationRecord(Base):
    """A solved calibration (valid or not, with its reasons), bound to a device in one mode."""

    __tablename__ = "calibrations"

    # SHA-256 of its canonical document
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    device_id: Mapped[str] = mapped_column(String(255), index=True)
    mode: Mapped[str] = mapped_column(String(64))  # e.g. 1280x720@30 BGR
    valid: Mapped[bool] = mapped_column(Boolean)
    rms_px: Mapped[float] = mapped_column(Float)
    # labrig.calibration/2 JSON (/1 before corners were kept)
    document: Mapped[str] = mapped_column(Text)
    plane_homography: Mapped[str | None] = mapped_column(Text)  # image px -> plane mm, JSON 3x3
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    valid_until: Mapped[datetime | None] = mapped_column(UTCDateTime())


class RigCalibrationRecord(Base):
    """A solved rig calibration (valid or not, with its reasons), bound to a rig's cameras: each
    one's place, device and mode as they were when it was stored."""

    __tablename__ = "rig_calibrations"

    # SHA-256 of its canonical document
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    rig_name: Mapped[str] = mapped_column(String(64), index=True)
    # [{"place", "device_id", "mode"}] of the rig's cameras, and the SHA-256 of that JSON: a rig
    # whose cameras, devices or modes changed no longer matches it
    binding: Mapped[str] = mapped_column(Text)
    binding_digest: Mapped[str] = mapped_column(String(64))
    valid: Mapped[bool] = mapped_column(Boolean)
    rms_px: Mapped[float] = mapped_column(Float)
    document: Mapped[str] = mapped_column(Text)  # labrig.rig-calibration/1 JSON
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    valid_until: Mapped[datetime | None] = mapped_column(UTCDateTime())


class AnalysisResultRecord(Base):
    """The AnalysisResult of an attempt: published (maybe degraded) or blocked, with its provenance.

    Append-only (database triggers refuse UPDATE and DELETE): a reprocess adds a
    new row for the attempt, a reviewer's change is a :class:`ResultRevision`.
    """

    __tablename__ = "analysis_results"
    # the lists page through results by date (migration 0018)
    __table_args__ = (
        Index("ix_analysis_results_created_at", "created_at", "id"),
        # by status, then date (migration 0023)
        Index("ix_analysis_results_status", "status", "degraded", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    attempt_id: Mapped[str] = mapped_column(String(36), ForeignKey("attempts.id"), index=True)
    status: Mapped[str] = mapped_column(String(16))  # published or blocked
    degraded: Mapped[bool] = mapped_column(Boolean)
    reasons: Mapped[str] = mapped_column(Text)  # JSON list of sentences
    document: Mapped[str] = mapped_column(Text)  # labrig.result/1 canonical JSON
    digest: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ReleaseRecord(Base):
    """A versioned analysis pipeline: its manifest (stage versions, parameters),
    health and activation."""

    __tablename__ = "releases"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    version: Mapped[str] = mapped_column(String(64))
    manifest: Mapped[str] = mapped_column(Text)  # labrig.release/1 canonical JSON
    # enters every analysis job's idempotency key
    digest: Mapped[str] = mapped_column(String(64), index=True)
    # registered, healthy, unhealthy, active, retired, rolled_back
    status: Mapped[str] = mapped_column(String(16))
    health: Mapped[str | None] = mapped_column(Text)  # the last health check report, JSON
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    activated_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    note: Mapped[str | None] = mapped_column(Text)  # rollback reason


class ResultRevision(Base):
    """A reviewer's change to a published result, stored beside it, never over it.
    Append-only (triggers)."""

    __tablename__ = "result_revisions"
    __table_args__ = (UniqueConstraint("result_id", "number", name="uq_result_revisions_number"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    result_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("analysis_results.id"), index=True
    )
    # 1, 2, … per result: two revisions of one base cannot both land
    number: Mapped[int] = mapped_column(Integer)
    base_id: Mapped[str] = mapped_column(String(36))  # the result (number 1) or the revision before
    reviewer: Mapped[str] = mapped_column(String(128))
    reason: Mapped[str] = mapped_column(Text)
    # labrig.revision/1 canonical JSON: changes with old and new values
    document: Mapped[str] = mapped_column(Text)
    digest: Mapped[str] = mapped_column(String(64))  # SHA-256 of the document
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ResultSignOff(Base):
    """A result whose latest sign-off is in force: no revision after it changed a value or the
    tracks. Not a record (those are the revisions): what the "signed off" filters read, written
    by the revision service with each revision of the result (``labrig.review.reviewed.
    keep_sign_off``), the row removed when a revision clears the sign-off (migration 0026)."""

    __tablename__ = "result_sign_offs"

    result_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("analysis_results.id"), primary_key=True
    )
    attempt_id: Mapped[str] = mapped_column(String(36), index=True)
    meaning: Mapped[str] = mapped_column(String(16))  # reviewed or approved
    number: Mapped[int] = mapped_column(Integer)  # the sign-off's revision
