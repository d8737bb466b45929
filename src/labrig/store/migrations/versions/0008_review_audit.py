"""Review and audit: result revisions, role assignments, the hash-chained audit trail, and
append-only triggers.

Automatic results, revisions, role assignments and audit entries are append-only,
enforced by the database itself: triggers (DDL per dialect in
``labrig.store.dialects``) refuse UPDATE and DELETE on them.

Revision ID: 0008_review_audit
Revises: 0007_lean_job_indexes
"""

import sqlalchemy as sa
from alembic import op

from labrig.store.dialects import append_only_ddl, drop_append_only_ddl
from labrig.store.types import UTCDateTime

revision = "0008_review_audit"
down_revision = "0007_lean_job_indexes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "result_revisions",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "result_id",
            sa.String(36),
            sa.ForeignKey("analysis_results.id"),
            nullable=False,
            index=True,
        ),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("base_id", sa.String(36), nullable=False),
        sa.Column("reviewer", sa.String(128), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("result_id", "number", name="uq_result_revisions_number"),
    )
    op.create_table(
        "role_assignments",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("username", sa.String(128), nullable=False, index=True),
        sa.Column("role", sa.String(16), nullable=True),
        sa.Column("assigned_by", sa.String(128), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("assigned_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "audit_entries",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("recorded_at", sa.String(40), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("object_type", sa.String(32), nullable=False),
        sa.Column("object_id", sa.String(255), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("change", sa.Text(), nullable=False),
        sa.Column("change_digest", sa.String(64), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("entry_hash", sa.String(64), nullable=False),
    )
    for statement in append_only_ddl(op.get_bind().dialect.name):
        op.execute(statement)


def downgrade() -> None:
    for statement in drop_append_only_ddl(op.get_bind().dialect.name):
        op.execute(statement)
    op.drop_table("audit_entries")
    op.drop_table("role_assignments")
    op.drop_table("result_revisions")
