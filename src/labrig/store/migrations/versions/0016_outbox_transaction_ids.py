"""Delivery cursors on PostgreSQL: each event carries the id of the transaction that wrote it.

PostgreSQL transactions may commit out of the order they drew their ``seq`` in, so a cursor on
``seq`` could pass an event committed late below a number already seen. A transaction's id says
more: every transaction whose id is below the oldest one still running (the ``xmin`` of the
server's snapshot, ``pg_snapshot_xmin(pg_current_snapshot())``) has ended, so its events are all
visible. A consumer's cursor there is such an id: every event written by a transaction below it
is in the consumer's inbox or not one it takes, and a pass reads the events at and above it
through ``ix_outbox_events_txid`` instead of the whole outbox (``labrig.events.cursors``).

``outbox_events.txid`` is filled by the server (its default) on PostgreSQL; events recorded before
this revision get 0, so a consumer's first pass still reads them. On SQLite, whose commits are in
``seq`` order and whose cursors stay on ``seq``, the column stays empty.

Revision ID: 0016_outbox_transaction_ids
Revises: 0015_rig_calibrations
"""

import sqlalchemy as sa
from alembic import op

revision = "0016_outbox_transaction_ids"
down_revision = "0015_rig_calibrations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.add_column("outbox_events", sa.Column("txid", sa.BigInteger(), nullable=True))
    op.add_column("outbox_cursors", sa.Column("txid", sa.BigInteger(), nullable=True))
    if postgresql:
        op.execute("UPDATE outbox_events SET txid = 0")
        op.execute(
            "ALTER TABLE outbox_events ALTER COLUMN txid "
            "SET DEFAULT (pg_current_xact_id()::text::bigint), ALTER COLUMN txid SET NOT NULL"
        )
        op.create_index("ix_outbox_events_txid", "outbox_events", ["txid"])


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_outbox_events_txid", "outbox_events")
    op.drop_column("outbox_cursors", "txid")
    op.drop_column("outbox_events", "txid")
