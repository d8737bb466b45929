"""The Results screen's and ``labrig review list``'s sorts and filters from indexes: each attempt's
result status kept on the attempt (``attempts.result_status``), and the indexes that give a page of
attempts in the order of a column, or of one status, device or rig, without sorting the catalog.

``result_status`` is the status of the attempt's newest result (``published``, ``degraded``,
``blocked``), or ``pending`` while it has none. A trigger keeps it: results are append-only and
only ever inserted, so the insert of an attempt's newest result is the one moment it changes. The
Results screen's status of a row can differ from it while a reprocess of one of the attempt's jobs
runs (the row says pending, the column the previous result's status) or before the publisher wrote
the document of a stopped stage (the row says blocked, the column pending).

Measured on a copy of the 100k catalog's attempts, sessions, captures and results (100,000
attempts of 10,000 sessions, 300,000 captures): a page in subject order sorted every attempt (43 ms
at offset 0) before ``ix_sessions_subject`` (4 ms: the sessions read in order, each one's
attempts from ``ix_attempts_session_id``); a count of one device's attempts read every attempt (3 s) before
``ix_captures_device``/``ix_attempt_captures_capture`` (50 ms, from the device's captures).

Revision ID: 0023_attempt_sorts_and_filters
Revises: 0022_unsaved_rig_recordings
"""

import sqlalchemy as sa
from alembic import op

revision = "0023_attempt_sorts_and_filters"
down_revision = "0022_unsaved_rig_recordings"
branch_labels = None
depends_on = None

#: the status a result gives its attempt
STATUS_OF = (
    "CASE WHEN {r}.status = 'blocked' THEN 'blocked' WHEN {r}.degraded THEN 'degraded' "
    "ELSE 'published' END"
)
#: the new result is its attempt's newest (results of one attempt by date, then id)
NEWEST = (
    "NOT EXISTS (SELECT 1 FROM analysis_results o WHERE o.attempt_id = NEW.attempt_id AND "
    "(o.created_at > NEW.created_at OR (o.created_at = NEW.created_at AND o.id > NEW.id)))"
)
SET_STATUS = (
    f"UPDATE attempts SET result_status = {STATUS_OF.format(r='NEW')} "
    f"WHERE id = NEW.attempt_id AND {NEWEST}"
)
BACKFILL = (
    "UPDATE attempts SET result_status = COALESCE((SELECT "
    f"{STATUS_OF.format(r='r')} FROM analysis_results r WHERE r.attempt_id = attempts.id "
    "ORDER BY r.created_at DESC, r.id DESC LIMIT 1), 'pending')"
)
INDEXES = (
    ("ix_attempts_result_status", "attempts", ["result_status", "created_at", "id"]),
    ("ix_attempts_number", "attempts", ["number", "created_at", "id"]),
    ("ix_sessions_subject", "sessions", ["subject_code", "id"]),
    ("ix_sessions_protocol", "sessions", ["protocol", "id"]),
    ("ix_captures_device", "captures", ["device_id", "id"]),
    ("ix_attempt_captures_capture", "attempt_captures", ["capture_id", "attempt_id"]),
    ("ix_rig_recordings_rig", "rig_recordings", ["rig_name", "attempt_id"]),
    ("ix_analysis_results_status", "analysis_results", ["status", "degraded", "created_at", "id"]),
)


def upgrade() -> None:
    op.add_column(
        "attempts",
        sa.Column("result_status", sa.String(16), nullable=False, server_default="pending"),
    )
    op.execute(BACKFILL)
    for name, table, columns in INDEXES:
        op.create_index(name, table, columns)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION labrig_attempt_result_status() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {SET_STATUS}; RETURN NULL; END $$"
        )
        op.execute(
            "CREATE TRIGGER analysis_results_attempt_status AFTER INSERT ON analysis_results "
            "FOR EACH ROW EXECUTE FUNCTION labrig_attempt_result_status()"
        )
    else:
        op.execute(
            "CREATE TRIGGER analysis_results_attempt_status AFTER INSERT ON analysis_results "
            f"BEGIN {SET_STATUS}; END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS analysis_results_attempt_status ON analysis_results")
        op.execute("DROP FUNCTION IF EXISTS labrig_attempt_result_status()")
    else:
        op.execute("DROP TRIGGER IF EXISTS analysis_results_attempt_status")
    for name, table, _columns in reversed(INDEXES):
        op.drop_index(name, table)
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("result_status")
