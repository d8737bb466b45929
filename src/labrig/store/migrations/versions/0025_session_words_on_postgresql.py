"""On PostgreSQL, the sessions' words as a search reads them: ``lower(subject_code)``,
``lower(protocol)`` and ``lower(operator)``, each indexed with ``text_pattern_ops``.

A search matches the start of a subject code, protocol or operator in any letter case
(``labrig.results.search.matching_attempts``). PostgreSQL knew nothing of how many sessions such a
start matches, guessed a seventh of them, and walked the results by date looking for the few of a
rare subject: 244 ms for ``S0123`` on the 100k catalog, every result before the newest of its read.
An index on each expression gives the planner its statistics (after ANALYZE) and the prefix's
range: the sessions found first, then their attempts (11 ms; ``s00``, a third of the catalog, 310 →
64 ms with its count). SQLite reads its sessions table (one row for ten attempts) whole, and gets
nothing.

Revision ID: 0025_session_words_on_postgresql
Revises: 0024_sessions_by_date
"""

from alembic import op

revision = "0025_session_words_on_postgresql"
down_revision = "0024_sessions_by_date"
branch_labels = None
depends_on = None

#: the sessions' columns a search reads
WORDS = ("subject_code", "protocol", "operator")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for column in WORDS:
        op.execute(
            f"CREATE INDEX ix_sessions_lower_{column} ON sessions (lower({column}) "
            "text_pattern_ops)"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for column in WORDS:
        op.execute(f"DROP INDEX IF EXISTS ix_sessions_lower_{column}")
