"""Sync: destinations, the objects to copy, acknowledgements by digest, failures with
backoff, batches.

Revision ID: 0009_export_sync
Revises: 0008_review_audit
"""

import sqlalchemy as sa
from alembic import op

from labrig.store.types import UTCDateTime

revision = "0009_export_sync"
down_revision = "0008_review_audit"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sync_destinations",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("destination_id", sa.String(36), nullable=False, index=True),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("configured_by", sa.String(128), nullable=False),
        sa.Column("configured_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "sync_objects",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("content", sa.String(32), nullable=False),
        sa.Column("ext", sa.String(16), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("ref_id", sa.String(64), nullable=False, index=True),
        sa.Column("body", sa.Text(), nullable=True),
        sa.Column("indexed_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "sync_acks",
        sa.Column("destination_id", sa.String(36), primary_key=True),
        sa.Column("sha256", sa.String(64), sa.ForeignKey("sync_objects.sha256"), primary_key=True),
        sa.Column("destination_name", sa.String(128), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("batch_id", sa.String(36), nullable=False, index=True),
        sa.Column("acknowledged_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "sync_failures",
        sa.Column("destination_id", sa.String(36), primary_key=True),
        sa.Column("sha256", sa.String(64), sa.ForeignKey("sync_objects.sha256"), primary_key=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("failed_at", UTCDateTime(), nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "sync_batches",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("destination_id", sa.String(36), nullable=False, index=True),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.Column("chain_seq", sa.Integer(), nullable=False),
        sa.Column("chain_hash", sa.String(64), nullable=False),
        sa.Column("acknowledged", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("batch_file", sa.Text(), nullable=True),
    )


def downgrade() -> None:
    for table in (
        "sync_batches",
        "sync_failures",
        "sync_acks",
        "sync_objects",
        "sync_destinations",
    ):
        op.drop_table(table)
