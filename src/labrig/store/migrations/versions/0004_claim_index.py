"""The claim index in the claim query's order: (state, priority DESC, created_at, id).

``JobQueue.claim`` orders Ready jobs by ``priority DESC, created_at, id``; the index of
0002 was ``(state, priority, created_at)``, so SQLite sorted every Ready job on every
claim and a claim grew slower with the backlog.

Revision ID: 0004_claim_index
Revises: 0003_capture
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_claim_index"
down_revision = "0003_capture"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_jobs_claim_order", "jobs")
    op.create_index(
        "ix_jobs_claim_order", "jobs", ["state", sa.text("priority DESC"), "created_at", "id"]
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_claim_order", "jobs")
    op.create_index("ix_jobs_claim_order", "jobs", ["state", "priority", "created_at"])
