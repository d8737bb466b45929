"""Drop three job indexes nothing needs: every enqueue and state change wrote their pages.

``ix_jobs_state`` duplicates the leading column of ``ix_jobs_claim_order``
(state, priority DESC, created_at, id), which serves every lookup by state;
no query looks jobs up by ``stage_id`` alone, nor by ``idempotency_key`` (an
output is found by its key in ``job_outputs``, whose primary key it is, and
jobs are joined to it from their own row). Each index costs a page in the
WAL at every commit that inserts a job or changes its state, and with
``synchronous=FULL`` the commit's fsync grows with the pages written.

Revision ID: 0007_lean_job_indexes
Revises: 0006_releases
"""

from alembic import op

revision = "0007_lean_job_indexes"
down_revision = "0006_releases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_jobs_state", "jobs")
    op.drop_index("ix_jobs_stage_id", "jobs")
    op.drop_index("ix_jobs_idempotency_key", "jobs")


def downgrade() -> None:
    op.create_index("ix_jobs_idempotency_key", "jobs", ["idempotency_key"])
    op.create_index("ix_jobs_stage_id", "jobs", ["stage_id"])
    op.create_index("ix_jobs_state", "jobs", ["state"])
