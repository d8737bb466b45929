"""Releases: versioned analysis pipelines with health checks, activation and rollback.

Revision ID: 0006_releases
Revises: 0005_analysis
"""

import sqlalchemy as sa
from alembic import op

from labrig.store.types import UTCDateTime

revision = "0006_releases"
down_revision = "0005_analysis"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "releases",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("manifest", sa.Text(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False, index=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("health", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("activated_at", UTCDateTime(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("releases")
