"""SQLAlchemy 2 models of the catalog.

Portable across SQLite and PostgreSQL: no dialect-specific types or SQL here;
dialect behaviour lives in ``labrig.store.dialects``. Schema changes go
through an Alembic migration in ``migrations/versions``, never ``create_all``.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from labrig.store.types import UTCDateTime


class Base(DeclarativeBase):
    pass


class Meta(Base):
    """Key/value facts about the catalog itself (its application marker, its id)."""

    __tablename__ = "labrig_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


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


class OutboxCursor(Base):
    """Where a consumer's deliveries stand: every event up to ``seq`` is in its inbox or
    not one it takes.

    Kept only where commits are in sequence order (SQLite), so a pass reads the outbox from here on,
    not from the first event ever recorded (``labrig.events.dispatcher``).
    """

    __tablename__ = "outbox_cursors"

    consumer: Mapped[str] = mapped_column(String(128), primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"))
    # the event names it took then: "*" (all) or a sorted JSON list
    names: Mapped[str] = mapped_column(Text)


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


class Job(Base):
    """One run of a stage over immutable inputs, driven by the seed-000 state machine.

    Lease columns: ``owner`` (host:pid:nonce), ``lease_host`` and ``lease_boot_id``
    say where the monotonic ``lease_deadline_mono`` is meaningful;
    ``lease_expires_at`` is its wall-clock copy for display and other hosts.
    ``fencing_token`` grows at every claim; every worker write is conditioned on it.
    """

    __tablename__ = "jobs"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    stage_id: Mapped[str] = mapped_column(String(128))
    # ix_jobs_attempt_id (partial: migration 0010)
    attempt_id: Mapped[str | None] = mapped_column(String(64))
    # partial indexes per state looked up (migration 0010)
    state: Mapped[str] = mapped_column(String(32))
    priority: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    input_digests: Mapped[str] = mapped_column(Text)  # JSON list, in the stage's declared order
    config: Mapped[str] = mapped_column(Text)  # canonical JSON of the stage configuration
    config_digest: Mapped[str] = mapped_column(String(64))
    model_manifest_digest: Mapped[str] = mapped_column(String(64))
    schema_version: Mapped[int] = mapped_column(Integer)
    idempotency_key: Mapped[str | None] = mapped_column(String(64))  # null until inputs are known
    deterministic: Mapped[bool] = mapped_column(Boolean)
    supersedes_job_id: Mapped[str | None] = mapped_column(String(36), ForeignKey("jobs.id"))
    owner: Mapped[str | None] = mapped_column(String(255))
    lease_host: Mapped[str | None] = mapped_column(String(255))
    lease_boot_id: Mapped[str | None] = mapped_column(String(64))
    lease_deadline_mono: Mapped[float | None] = mapped_column(Float)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    fencing_token: Mapped[int] = mapped_column(Integer, default=0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    progress_message: Mapped[str] = mapped_column(Text, default="")
    checkpoint: Mapped[str | None] = mapped_column(Text)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    error_code: Mapped[str | None] = mapped_column(String(64))
    error_message: Mapped[str | None] = mapped_column(Text)
    output_digest: Mapped[str | None] = mapped_column(String(64))


class JobDependency(Base):
    """``job_id`` waits (InputsPending) until ``depends_on_job_id`` has committed its output."""

    __tablename__ = "job_dependencies"

    job_id: Mapped[str] = mapped_column(String(36), ForeignKey("jobs.id"), primary_key=True)
    # also indexed
    depends_on_job_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("jobs.id"), primary_key=True
    )


class JobOutput(Base):
    """The one committed logical output of an idempotency key; never overwritten."""

    __tablename__ = "job_outputs"

    idempotency_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    job_id: Mapped[str] = mapped_column(String(36), ForeignKey("jobs.id"))
    fencing_token: Mapped[int] = mapped_column(Integer)
    digest: Mapped[str] = mapped_column(String(64))
    body: Mapped[str] = mapped_column(Text)  # canonical JSON of the output document
    committed_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ReproducibilityIncident(Base):
    """A second commit of a deterministic key with a different digest; the first output stands."""

    __tablename__ = "reproducibility_incidents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    idempotency_key: Mapped[str] = mapped_column(String(64), index=True)
    stage_id: Mapped[str] = mapped_column(String(128))
    first_job_id: Mapped[str] = mapped_column(String(36))
    first_digest: Mapped[str] = mapped_column(String(64))
    second_job_id: Mapped[str] = mapped_column(String(36))
    second_digest: Mapped[str] = mapped_column(String(64))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Blob(Base):
    """A file in the content-addressed media store (media/<aa>/<sha256><ext>)."""

    __tablename__ = "blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    ext: Mapped[str] = mapped_column(String(16))
    size: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(32))  # media, timestamps or manifest
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


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

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    subject_code: Mapped[str] = mapped_column(String(128))
    protocol: Mapped[str] = mapped_column(String(128))
    operator: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Capture(Base):
    """One recording from one device. ``state``: provisional, committed, salvaged,
    quarantined, abandoned."""

    __tablename__ = "captures"

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

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    session_id: Mapped[str] = mapped_column(String(36), ForeignKey("sessions.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # why it is not a normal attempt (its recording was interrupted); None for most
    note: Mapped[str | None] = mapped_column(Text)


class AttemptCapture(Base):
    __tablename__ = "attempt_captures"

    attempt_id: Mapped[str] = mapped_column(String(36), ForeignKey("attempts.id"), primary_key=True)
    capture_id: Mapped[str] = mapped_column(String(36), ForeignKey("captures.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)


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


class AnalysisResultRecord(Base):
    """The AnalysisResult of an attempt: published (maybe degraded) or blocked, with its provenance.

    Append-only (database triggers refuse UPDATE and DELETE): a reprocess adds a
    new row for the attempt, a reviewer's change is a :class:`ResultRevision`.
    """

    __tablename__ = "analysis_results"

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


class RoleAssignment(Base):
    """A user's role from this assignment on (the latest per user counts; ``role`` null =
    removed). Append-only."""

    __tablename__ = "role_assignments"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(128), index=True)  # the login, lower-case
    role: Mapped[str | None] = mapped_column(String(16))  # technician, reviewer, admin, or null
    assigned_by: Mapped[str] = mapped_column(String(128))
    reason: Mapped[str] = mapped_column(Text)
    assigned_at: Mapped[datetime] = mapped_column(UTCDateTime())


class AuditEntry(Base):
    """One link of the hash-chained audit trail (see ``labrig.domain.audit``).
    Append-only (triggers).

    Every column is text as hashed, so verifying never re-parses a value; ``seq``
    is set by the writer (previous + 1), never by a database sequence, so a gap
    always means a missing entry.
    """

    __tablename__ = "audit_entries"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    recorded_at: Mapped[str] = mapped_column(String(40))  # ISO-8601 UTC, microseconds
    actor: Mapped[str] = mapped_column(String(128))  # the login of who did it
    host: Mapped[str] = mapped_column(String(255))  # the workstation it was done on
    # e.g. review.revise, roles.set, release.activate
    action: Mapped[str] = mapped_column(String(64))
    object_type: Mapped[str] = mapped_column(String(32))  # result, user, release
    object_id: Mapped[str] = mapped_column(String(255))
    reason: Mapped[str] = mapped_column(Text)  # why, in the actor's words
    change: Mapped[str] = mapped_column(Text)  # canonical JSON of what changed
    change_digest: Mapped[str] = mapped_column(String(64))  # SHA-256 of ``change``
    prev_hash: Mapped[str] = mapped_column(String(64))
    entry_hash: Mapped[str] = mapped_column(String(64))


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
