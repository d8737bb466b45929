"""The Queue screen's newest jobs are read through the index of the jobs' dates (migration 0019):
the window's queue monitor reads them before it first paints, and a lab's catalog holds a million
jobs after a few years; without the index every job was sorted (3 s)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from tests.integration.queue.conftest import Rig


def test_the_newest_jobs_come_from_the_date_index_in_order(rig: Rig) -> None:
    for i in range(12):
        rig.queue.enqueue("t.echo", [f"{i:064x}"])
        rig.time.advance(1.0)
    oldest_first = [j.id for j in rig.queue.jobs()]
    sent: list[tuple[str, Any]] = []

    def capture(_c: Any, _cur: Any, statement: str, parameters: Any, *_a: Any) -> None:
        sent.append((statement, parameters))

    event.listen(rig.store.engine, "before_cursor_execute", capture)
    try:
        newest = rig.queue.jobs(limit=5, newest_first=True)
    finally:
        event.remove(rig.store.engine, "before_cursor_execute", capture)
    assert [j.id for j in newest] == oldest_first[::-1][:5]
    statement, parameters = next((s, p) for s, p in sent if "FROM jobs" in s)
    with rig.store.read() as session:
        explain = "EXPLAIN QUERY PLAN " if rig.store.dialect == "sqlite" else "EXPLAIN "
        if rig.store.dialect != "sqlite":  # a dozen rows are read whole: ask if the index serves
            session.connection().exec_driver_sql("SET LOCAL enable_seqscan = off")
        plan = " | ".join(
            str(row[-1])
            for row in session.connection().exec_driver_sql(explain + statement, parameters)
        )
    assert "ix_jobs_created_at" in plan, plan
    assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan
