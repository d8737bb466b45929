"""On PostgreSQL, a search's words are found through an index of each session's lowered column
(migration 0025): the planner then knows how many sessions a start matches, and reads a rare
subject's sessions first instead of walking every result by date."""

from __future__ import annotations

from labrig.capture import create_session
from labrig.jobs import JobQueue, StageRegistry
from labrig.results.search import matching_attempts
from labrig.store import Store


def test_each_word_of_a_search_can_be_read_from_its_index(pg_store: Store) -> None:
    store = pg_store
    queue = JobQueue(store, StageRegistry(()))
    for n in range(40):
        create_session(queue, f"S{n:04d}", f"gait-{n % 3}", f"op{n % 5}")
    statement = matching_attempts("S001").compile(store.engine)
    with store.engine.connect() as conn:
        # with scans refused, the plan shows which indexes the search's own conditions can use
        conn.exec_driver_sql("SET enable_seqscan = off")
        plan = "\n".join(
            row[0] for row in conn.exec_driver_sql("EXPLAIN " + str(statement), statement.params)
        )
    for column in ("subject_code", "protocol", "operator"):
        assert f"ix_sessions_lower_{column}" in plan, plan
