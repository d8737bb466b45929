"""Analysis: calibrations bound to devices, and published analysis results.

Revision ID: 0005_analysis
Revises: 0004_claim_index
"""

import sqlalchemy as sa
from alembic import op

from labrig.store.types import UTCDateTime

revision = "0005_analysis"
down_revision = "0004_claim_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "calibrations",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("device_id", sa.String(255), nullable=False, index=True),
        sa.Column("mode", sa.String(64), nullable=False),
        sa.Column("valid", sa.Boolean(), nullable=False),
        sa.Column("rms_px", sa.Float(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("plane_homography", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("valid_until", UTCDateTime(), nullable=True),
    )
    op.create_table(
        "analysis_results",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "attempt_id", sa.String(36), sa.ForeignKey("attempts.id"), nullable=False, index=True
        ),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("degraded", sa.Boolean(), nullable=False),
        sa.Column("reasons", sa.Text(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("analysis_results")
    op.drop_table("calibrations")
