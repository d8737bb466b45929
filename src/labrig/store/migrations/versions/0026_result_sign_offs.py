"""The results whose latest sign-off is in force, for the "signed off" filters of the Results
screen and ``labrig review list``: ``result_sign_offs``, one row per such result.

Whether a result is signed off lives in its revision documents (``labrig.revision/2`` with
``sign_off``) and depends on the revisions after it: one that changes a value or the tracks, or
undoes a revision, clears it (``labrig.review.reviewed.sign_off_state``). A filter could only work
that out by reading every revised result's documents. The revision service now writes the
outcome here with each revision, in the revision's transaction (``keep_sign_off``); this
migration works it out once for the revisions already stored, as ``sign_off_state`` does.

Revision ID: 0026_result_sign_offs
Revises: 0025_session_words_on_postgresql
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0026_result_sign_offs"
down_revision = "0025_session_words_on_postgresql"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "result_sign_offs",
        sa.Column(
            "result_id", sa.String(36), sa.ForeignKey("analysis_results.id"), primary_key=True
        ),
        sa.Column("attempt_id", sa.String(36), nullable=False),
        sa.Column("meaning", sa.String(16), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
    )
    op.create_index("ix_result_sign_offs_attempt_id", "result_sign_offs", ["attempt_id"])
    in_force: dict[str, tuple[str, str, int] | None] = {}  # result -> (attempt, meaning, number)
    revisions = op.get_bind().execute(
        sa.text(
            "SELECT v.result_id, r.attempt_id, v.number, v.document FROM result_revisions v "
            "JOIN analysis_results r ON r.id = v.result_id ORDER BY v.result_id, v.number"
        )
    )
    for result_id, attempt_id, number, document in revisions:
        doc = json.loads(document)
        if doc.get("sign_off"):
            in_force[result_id] = (attempt_id, doc["sign_off"]["meaning"], number)
        elif doc["changes"] or doc.get("operations") or doc.get("undoes") is not None:
            in_force[result_id] = None  # a change of the data clears a sign-off before it
    rows = [
        {"result_id": r, "attempt_id": kept[0], "meaning": kept[1], "number": kept[2]}
        for r, kept in in_force.items()
        if kept is not None
    ]
    if rows:
        table = sa.table(
            "result_sign_offs",
            *(sa.column(c) for c in ("result_id", "attempt_id", "meaning", "number")),
        )
        op.bulk_insert(table, rows)


def downgrade() -> None:
    op.drop_index("ix_result_sign_offs_attempt_id", "result_sign_offs")
    op.drop_table("result_sign_offs")
