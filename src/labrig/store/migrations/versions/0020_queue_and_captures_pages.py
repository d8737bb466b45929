"""Pages of the queue by state and of the captures by date, and the queue's counts, without reading
the history: ``ix_jobs_unsettled`` and ``ix_captures_started_at``.

The queue's counts (the window's status bar, ``labrig jobs``) grouped every job ever run by state:
1,000,000 rows after a few years, read on the window's thread at each refresh. Almost all of them
ended well (Succeeded, SucceededDegraded) or were set aside (Cancelled, Superseded) and stay so; the
others are the live queue and the jobs that need an operator. ``ix_jobs_unsettled`` holds only
those, by date with their state: their counts and a page of one of their states read it alone, and
the history never enters it. The state comes last so that a job's moves from Ready to Leased to
Running change its entry where it is, on one page, instead of moving it between the states' ranges
(a job enters the index when it is made and leaves it when it settles).
``ix_captures_started_at``: ``labrig captures`` a page at a time, by date, without sorting every
capture.

Revision ID: 0020_queue_and_captures_pages
Revises: 0019_jobs_by_date
"""

import sqlalchemy as sa
from alembic import op

revision = "0020_queue_and_captures_pages"
down_revision = "0019_jobs_by_date"
branch_labels = None
depends_on = None

#: written exactly as labrig.jobs.listing writes its term (SQLite uses a partial index only for a
#: query whose WHERE clause contains the index's own terms): labrig.domain.jobs.UNSETTLED
UNSETTLED = (
    "state IN ('Created', 'InputsPending', 'Ready', 'Leased', 'Running', 'Checkpointed', "
    "'RetryWaiting', 'BlockedByQuality', 'PermanentFailure')"
)


def upgrade() -> None:
    op.create_index(
        "ix_jobs_unsettled",
        "jobs",
        ["created_at", "id", "state"],
        sqlite_where=sa.text(UNSETTLED),
        postgresql_where=sa.text(UNSETTLED),
    )
    op.create_index("ix_captures_started_at", "captures", ["started_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_captures_started_at", "captures")
    op.drop_index("ix_jobs_unsettled", "jobs")
