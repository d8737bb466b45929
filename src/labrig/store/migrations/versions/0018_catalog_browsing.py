"""Browsing a catalog of lab scale: the lists page through results and attempts by date.

The Results and Review lists and ``labrig review list`` read one page at a time, newest or oldest
first, which without an index on the date sorted the whole table at every page (100,000 attempts
after a few years of daily recording). Searching by subject code reads sessions by their code.

Revision ID: 0018_catalog_browsing
Revises: 0017_blob_checks
"""

from alembic import op

revision = "0018_catalog_browsing"
down_revision = "0017_blob_checks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_analysis_results_created_at", "analysis_results", ["created_at", "id"])
    op.create_index("ix_attempts_created_at", "attempts", ["created_at"])
    op.create_index("ix_sessions_subject_code", "sessions", ["subject_code"])


def downgrade() -> None:
    op.drop_index("ix_sessions_subject_code", "sessions")
    op.drop_index("ix_attempts_created_at", "attempts")
    op.drop_index("ix_analysis_results_created_at", "analysis_results")
