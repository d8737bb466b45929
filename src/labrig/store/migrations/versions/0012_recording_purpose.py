"""What each recording is for, and a note on an attempt whose recording was cut short.

``captures.purpose``: an attempt, the calibration board, or the board lying on the plane. The
Calibration screen offers board recordings as boards and plane recordings as plane views, so a
marker attempt is never offered as a board. Captures from before this revision have none (NULL);
those in no attempt are offered as either, as before.

``attempts.note``: why the attempt is not a normal one, e.g. its recording was interrupted because
the window was closed while recording.

Revision ID: 0012_recording_purpose
Revises: 0011_outbox_cursors
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_recording_purpose"
down_revision = "0011_outbox_cursors"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("captures", sa.Column("purpose", sa.String(16), nullable=True))
    op.add_column("attempts", sa.Column("note", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("note")
    with op.batch_alter_table("captures") as batch:
        batch.drop_column("purpose")
