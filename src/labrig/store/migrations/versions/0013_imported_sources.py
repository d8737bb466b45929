"""Each imported file's digest, once: ``imported_sources``.

Two ``labrig import`` of the same file started at the same moment both passed the check for an
earlier import and both committed. The primary key on the digest makes the commit itself refuse the
second. Filled from the captures already imported; where a file was imported more than once before
this revision, the earliest capture (by commit time, then id) is the one recorded, and the others
stay as they are.

Revision ID: 0013_imported_sources
Revises: 0012_recording_purpose
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_imported_sources"
down_revision = "0012_recording_purpose"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "imported_sources",
        sa.Column("source_sha256", sa.String(64), primary_key=True),
        sa.Column("capture_id", sa.String(36), sa.ForeignKey("captures.id"), nullable=False),
    )
    op.execute(
        "INSERT INTO imported_sources (source_sha256, capture_id) "
        "SELECT source_sha256, id FROM ("
        "  SELECT source_sha256, id, ROW_NUMBER() OVER ("
        "    PARTITION BY source_sha256 ORDER BY committed_at, id) AS n "
        "  FROM captures WHERE source_sha256 IS NOT NULL AND state IN ('committed', 'salvaged')"
        ") AS first_imports WHERE n = 1"
    )


def downgrade() -> None:
    op.drop_table("imported_sources")
