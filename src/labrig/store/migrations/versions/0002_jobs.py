"""Durable job queue: jobs, dependencies, committed outputs, reproducibility incidents.

Revision ID: 0002_jobs
Revises: 0001_foundation
"""

import sqlalchemy as sa
from alembic import op

from labrig.store.types import UTCDateTime

revision = "0002_jobs"
down_revision = "0001_foundation"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("stage_id", sa.String(128), nullable=False, index=True),
        sa.Column("attempt_id", sa.String(64), nullable=True, index=True),
        sa.Column("state", sa.String(32), nullable=False, index=True),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("input_digests", sa.Text(), nullable=False),
        sa.Column("config", sa.Text(), nullable=False),
        sa.Column("config_digest", sa.String(64), nullable=False),
        sa.Column("model_manifest_digest", sa.String(64), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(64), nullable=True, index=True),
        sa.Column("deterministic", sa.Boolean(), nullable=False),
        sa.Column("supersedes_job_id", sa.String(36), sa.ForeignKey("jobs.id"), nullable=True),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("lease_host", sa.String(255), nullable=True),
        sa.Column("lease_boot_id", sa.String(64), nullable=True),
        sa.Column("lease_deadline_mono", sa.Float(), nullable=True),
        sa.Column("lease_expires_at", UTCDateTime(), nullable=True),
        sa.Column("fencing_token", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=True),
        sa.Column("progress", sa.Float(), nullable=False),
        sa.Column("progress_message", sa.Text(), nullable=False),
        sa.Column("checkpoint", sa.Text(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("error_code", sa.String(64), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("output_digest", sa.String(64), nullable=True),
    )
    op.create_index("ix_jobs_claim_order", "jobs", ["state", "priority", "created_at"])
    op.create_table(
        "job_dependencies",
        sa.Column("job_id", sa.String(36), sa.ForeignKey("jobs.id"), primary_key=True),
        sa.Column("depends_on_job_id", sa.String(36), sa.ForeignKey("jobs.id"), primary_key=True),
    )
    op.create_table(
        "job_outputs",
        sa.Column("idempotency_key", sa.String(64), primary_key=True),
        sa.Column("job_id", sa.String(36), sa.ForeignKey("jobs.id"), nullable=False),
        sa.Column("fencing_token", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("committed_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "reproducibility_incidents",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("idempotency_key", sa.String(64), nullable=False, index=True),
        sa.Column("stage_id", sa.String(128), nullable=False),
        sa.Column("first_job_id", sa.String(36), nullable=False),
        sa.Column("first_digest", sa.String(64), nullable=False),
        sa.Column("second_job_id", sa.String(36), nullable=False),
        sa.Column("second_digest", sa.String(64), nullable=False),
        sa.Column("recorded_at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("reproducibility_incidents")
    op.drop_table("job_outputs")
    op.drop_table("job_dependencies")
    op.drop_index("ix_jobs_claim_order", "jobs")
    op.drop_table("jobs")
