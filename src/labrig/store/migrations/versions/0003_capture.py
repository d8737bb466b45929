"""Capture: blobs, devices, sessions, captures and their segments, attempts.

Revision ID: 0003_capture
Revises: 0002_jobs
"""

import sqlalchemy as sa
from alembic import op

from labrig.store.types import UTCDateTime

revision = "0003_capture"
down_revision = "0002_jobs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "blobs",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("ext", sa.String(16), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "devices",
        sa.Column("device_id", sa.String(255), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("info", sa.Text(), nullable=False),
        sa.Column("verified", sa.Boolean(), nullable=False),
        sa.Column("inventory_entry", sa.String(128), nullable=True),
        sa.Column("mode", sa.Text(), nullable=True),
        sa.Column("measured_fps", sa.Float(), nullable=True),
        sa.Column("reason_code", sa.String(64), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("checked_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("subject_code", sa.String(128), nullable=False),
        sa.Column("protocol", sa.String(128), nullable=False),
        sa.Column("operator", sa.String(128), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "captures",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "session_id", sa.String(36), sa.ForeignKey("sessions.id"), nullable=True, index=True
        ),
        sa.Column("device_id", sa.String(255), nullable=False),
        sa.Column("origin", sa.String(32), nullable=False),
        sa.Column("state", sa.String(32), nullable=False, index=True),
        sa.Column("mode", sa.Text(), nullable=False),
        sa.Column("verification", sa.Text(), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("committed_at", UTCDateTime(), nullable=True),
        sa.Column("frame_count", sa.Integer(), nullable=False),
        sa.Column("dropped_frames", sa.Integer(), nullable=False),
        sa.Column("manifest_sha256", sa.String(64), nullable=True),
        sa.Column("provisional_dir", sa.Text(), nullable=True),
        sa.Column("report", sa.Text(), nullable=True),
        sa.Column("source_sha256", sa.String(64), nullable=True, index=True),
    )
    op.create_table(
        "capture_segments",
        sa.Column("capture_id", sa.String(36), sa.ForeignKey("captures.id"), primary_key=True),
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("media_sha256", sa.String(64), sa.ForeignKey("blobs.sha256"), nullable=False),
        sa.Column("timestamps_sha256", sa.String(64), sa.ForeignKey("blobs.sha256"), nullable=True),
        sa.Column("frames", sa.Integer(), nullable=False),
        sa.Column("first_mono_ns", sa.BigInteger(), nullable=False),
        sa.Column("last_mono_ns", sa.BigInteger(), nullable=False),
    )
    op.create_table(
        "attempts",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "session_id", sa.String(36), sa.ForeignKey("sessions.id"), nullable=False, index=True
        ),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "attempt_captures",
        sa.Column("attempt_id", sa.String(36), sa.ForeignKey("attempts.id"), primary_key=True),
        sa.Column("capture_id", sa.String(36), sa.ForeignKey("captures.id"), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    for table in (
        "attempt_captures",
        "attempts",
        "capture_segments",
        "captures",
        "sessions",
        "devices",
        "blobs",
    ):
        op.drop_table(table)
