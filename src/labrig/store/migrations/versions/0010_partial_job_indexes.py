"""Index only the jobs each lookup can find: Ready ones in claim order, held leases, due
retries, attempts.

``ix_jobs_claim_order`` (state, priority DESC, created_at, id) held every job
ever enqueued, so each state change moved an entry between two places of it:
a claim (Ready → Running) and a completion (Running → Succeeded) each wrote
two or three of its pages, and it grew with the history. Its lookups each ask
for one state, so each gets a partial index holding only the rows it can
match: the claim's Ready jobs in claim order; the reaper's held leases; the
retries waiting for their time. A job leaves them as it ends, so they stay as
small as the live queue, and a completion writes one small page instead.
``ix_jobs_attempt_id`` leaves out jobs without an attempt, which no lookup by
attempt can find. And the jobs waiting for a job are found through a new index
on ``job_dependencies.depends_on_job_id``: a completion asked whether anything
waits for its job by scanning every dependency ever recorded.

Revision ID: 0010_partial_job_indexes
Revises: 0009_export_sync
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_partial_job_indexes"
down_revision = "0009_export_sync"
branch_labels = None
depends_on = None

#: each WHERE is written exactly as the queries in labrig.jobs.rows write theirs: SQLite uses a partial
#: index only for a query whose WHERE clause contains the index's own terms
PARTIAL = (
    ("ix_jobs_ready", [sa.text("priority DESC"), "created_at", "id"], "state = 'Ready'"),
    ("ix_jobs_held", ["state"], "state IN ('Leased', 'Running', 'Checkpointed')"),
    ("ix_jobs_retry", ["next_attempt_at"], "state = 'RetryWaiting'"),
    ("ix_jobs_attempt_id", ["attempt_id"], "attempt_id IS NOT NULL"),
)


def upgrade() -> None:
    op.drop_index("ix_jobs_claim_order", "jobs")
    op.drop_index("ix_jobs_attempt_id", "jobs")
    for name, columns, where in PARTIAL:
        op.create_index(
            name, "jobs", columns, sqlite_where=sa.text(where), postgresql_where=sa.text(where)
        )
    op.create_index("ix_job_dependencies_depends_on", "job_dependencies", ["depends_on_job_id"])


def downgrade() -> None:
    op.drop_index("ix_job_dependencies_depends_on", "job_dependencies")
    for name, _columns, _where in PARTIAL:
        op.drop_index(name, "jobs")
    op.create_index("ix_jobs_attempt_id", "jobs", ["attempt_id"])
    op.create_index(
        "ix_jobs_claim_order", "jobs", ["state", sa.text("priority DESC"), "created_at", "id"]
    )
