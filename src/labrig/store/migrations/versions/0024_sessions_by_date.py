"""The capture sessions by date: ``ix_sessions_created_at``.

``labrig sessions`` and the Results screen's sessions list them a page at a time, newest first,
each with its number of attempts. On the 100k catalog (10,000 sessions) a page read and counted
every session's attempts before it sorted them (93 ms); through this index it reads the page's
sessions in their order and counts only theirs (from ``ix_attempts_session_id``).

Revision ID: 0024_sessions_by_date
Revises: 0023_attempt_sorts_and_filters
"""

from alembic import op

revision = "0024_sessions_by_date"
down_revision = "0023_attempt_sorts_and_filters"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_sessions_created_at", "sessions", ["created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_sessions_created_at", "sessions")
