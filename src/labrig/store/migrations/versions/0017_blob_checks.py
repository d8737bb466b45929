"""When each blob was last found whole: ``blobs.verified_at``.

``labrig verify`` re-hashes every blob of the media store, which on a store of many terabytes
takes hours. Each blob found whole now records when, so a check can take only part of the store:
what was stored since a date (``--since``) or what has not been found whole for some days
(``--unchecked-days``), oldest first, while the full check stays the default.

Revision ID: 0017_blob_checks
Revises: 0016_outbox_transaction_ids
"""

import sqlalchemy as sa
from alembic import op

from labrig.store.types import UTCDateTime

revision = "0017_blob_checks"
down_revision = "0016_outbox_transaction_ids"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("blobs", sa.Column("verified_at", UTCDateTime(), nullable=True))
    op.create_index("ix_blobs_created_at", "blobs", ["created_at"])
    op.create_index("ix_blobs_verified_at", "blobs", ["verified_at"])


def downgrade() -> None:
    op.drop_index("ix_blobs_verified_at", "blobs")
    op.drop_index("ix_blobs_created_at", "blobs")
    op.drop_column("blobs", "verified_at")
