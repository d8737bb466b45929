"""The durable job queue: jobs, their dependencies, their outputs, and reproducibility incidents."""

from datetime import datetime

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from labrig.store.models.base import Base
from labrig.store.types import UTCDateTime


class Job(Base):
    """One run of a stage over immutable inputs, driven by the seed-000 state machine.

    Lease columns: ``owner`` (host:pid:nonce), ``lease_host`` and ``lease_boot_id``
    say where the monotonic ``lease_deadline_mono`` is meaningful;
    ``lease_expires_at`` is its wall-clock copy for display and other hosts.
    ``fencing_token`` grows at every claim; every worker write is conditioned on it.
    """

    __tablename__ = "jobs"
    # the queue's newest jobs by date (migration 0019)
    __table_args__ = (
        Index("ix_jobs_created_at", "created_at", "id"),
        Index("ix_jobs_stage", "stage_id", "created_at", "id"),  # migration 0021
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    stage_id: Mapped[str] = mapped_column(String(128))
    # ix_jobs_attempt_id (partial: migration 0010)
    attempt_id: Mapped[str | None] = mapped_column(String(64))
    # partial indexes per state looked up (migration 0010), and ix_jobs_unsettled and
    # ix_jobs_settled (state, created_at, id) of the jobs not settled and settled (0020, 0021)
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
