"""Foundation: catalog marker, event outbox, consumer inbox, delivery failures.

Revision ID: 0001_foundation
Revises:
"""

import sqlalchemy as sa
from alembic import op

from labrig.store.types import UTCDateTime

revision = "0001_foundation"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "labrig_meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )
    op.create_table(
        "outbox_events",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("event_id", sa.String(36), nullable=False, unique=True),
        sa.Column("name", sa.String(128), nullable=False, index=True),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("known", sa.Boolean(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("recorded_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "consumer_inbox",
        sa.Column("consumer", sa.String(128), primary_key=True),
        sa.Column(
            "event_id", sa.String(36), sa.ForeignKey("outbox_events.event_id"), primary_key=True
        ),
        sa.Column("processed_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "delivery_failures",
        sa.Column("consumer", sa.String(128), primary_key=True),
        sa.Column(
            "event_id", sa.String(36), sa.ForeignKey("outbox_events.event_id"), primary_key=True
        ),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("delivery_failures")
    op.drop_table("consumer_inbox")
    op.drop_table("outbox_events")
    op.drop_table("labrig_meta")
