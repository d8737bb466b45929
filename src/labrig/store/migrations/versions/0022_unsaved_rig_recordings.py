"""The rig recordings a crash left unsaved, from an index: ``ix_rig_recordings_unsaved``.

Start-up recovery asks, every time a window or a worker opens the store, for the rig recordings
still in state ``recording``. On the 100k catalog (100,000 rig recordings, all saved) that read
every row: 26 ms before the window could paint. The partial index holds only the recordings being
made or left unsaved (none, almost always): a row enters it when the recording starts and leaves it
when it is saved.

Revision ID: 0022_unsaved_rig_recordings
Revises: 0021_settled_jobs_and_stages
"""

import sqlalchemy as sa
from alembic import op

revision = "0022_unsaved_rig_recordings"
down_revision = "0021_settled_jobs_and_stages"
branch_labels = None
depends_on = None

#: written exactly as labrig.pipeline.rig_attempts asks: RigRecording.state == "recording"
UNSAVED = "state = 'recording'"


def upgrade() -> None:
    op.create_index(
        "ix_rig_recordings_unsaved",
        "rig_recordings",
        ["state"],
        sqlite_where=sa.text(UNSAVED),
        postgresql_where=sa.text(UNSAVED),
    )


def downgrade() -> None:
    op.drop_index("ix_rig_recordings_unsaved", "rig_recordings")
