"""Rig calibrations: ``rig_calibrations``.

A rig calibration (every camera's lens and pose in one set of axes) is stored valid or not, bound
to the rig's cameras as they were (place, device, mode), and current until ``valid_until`` while
the rig still has those cameras.

Revision ID: 0015_rig_calibrations
Revises: 0014_rigs
"""

import sqlalchemy as sa
from alembic import op

from labrig.store.types import UTCDateTime

revision = "0015_rig_calibrations"
down_revision = "0014_rigs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rig_calibrations",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("rig_name", sa.String(64), nullable=False),
        sa.Column("binding", sa.Text(), nullable=False),
        sa.Column("binding_digest", sa.String(64), nullable=False),
        sa.Column("valid", sa.Boolean(), nullable=False),
        sa.Column("rms_px", sa.Float(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("valid_until", UTCDateTime(), nullable=True),
    )
    op.create_index("ix_rig_calibrations_rig_name", "rig_calibrations", ["rig_name"])


def downgrade() -> None:
    op.drop_index("ix_rig_calibrations_rig_name", "rig_calibrations")
    op.drop_table("rig_calibrations")
