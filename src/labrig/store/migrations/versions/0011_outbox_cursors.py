"""A cursor per event consumer, so a dispatch pass reads the outbox from where the consumer stands.

A pass looked for each consumer's undelivered events among every event of
its names ever recorded, through ``ix_outbox_events_name``: the work of a
pass grew with the history, and every event recorded wrote a page of that
index. On SQLite, where each commit's events are numbered above every
earlier commit's, a consumer's cursor says that every event up to it is in
its inbox or not one it takes; a pass reads on from there in sequence order
and the name index goes. PostgreSQL transactions may commit out of the order
they drew their numbers in, so there the cursor is not used and the index
stays.

Revision ID: 0011_outbox_cursors
Revises: 0010_partial_job_indexes
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_outbox_cursors"
down_revision = "0010_partial_job_indexes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "outbox_cursors",
        sa.Column("consumer", sa.String(128), primary_key=True),
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("names", sa.Text(), nullable=False),
    )
    if op.get_bind().dialect.name == "sqlite":
        op.drop_index("ix_outbox_events_name", "outbox_events")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.create_index("ix_outbox_events_name", "outbox_events", ["name"])
    op.drop_table("outbox_cursors")
