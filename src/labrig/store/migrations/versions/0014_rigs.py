"""Rigs and their recordings: ``rigs``, ``rig_devices``, ``rig_recordings``.

A rig is a named set of devices recorded together, each in its mode and with its place name. A rig
recording lists its captures and how each device ended, holds the sync figures measured over them,
and names the attempt it became.

Revision ID: 0014_rigs
Revises: 0013_imported_sources
"""

import sqlalchemy as sa
from alembic import op

from labrig.store.types import UTCDateTime

revision = "0014_rigs"
down_revision = "0013_imported_sources"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rigs",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
    )
    op.create_table(
        "rig_devices",
        sa.Column(
            "rig_name",
            sa.String(64),
            sa.ForeignKey("rigs.name", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("device_id", sa.String(255), nullable=False),
        sa.Column("mode", sa.Text(), nullable=False),
        sa.Column("place", sa.String(64), nullable=False),
    )
    op.create_table(
        "rig_recordings",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("rig_name", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(36), sa.ForeignKey("sessions.id"), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("devices", sa.Text(), nullable=False),
        sa.Column("sync", sa.Text(), nullable=True),
        sa.Column("attempt_id", sa.String(36), sa.ForeignKey("attempts.id"), nullable=True),
    )
    op.create_index("ix_rig_recordings_attempt_id", "rig_recordings", ["attempt_id"])


def downgrade() -> None:
    op.drop_index("ix_rig_recordings_attempt_id", "rig_recordings")
    op.drop_table("rig_recordings")
    op.drop_table("rig_devices")
    op.drop_table("rigs")
