"""The Queue screen's newest jobs by date: ``ix_jobs_created_at``.

The window's queue monitor reads the newest 500 jobs when it opens; without an index on their date
it sorted every job (1,000,000 after a few years: 3 s before the window first painted).

Revision ID: 0019_jobs_by_date
Revises: 0018_catalog_browsing
"""

from alembic import op

revision = "0019_jobs_by_date"
down_revision = "0018_catalog_browsing"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_jobs_created_at", "jobs", ["created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_jobs_created_at", "jobs")
