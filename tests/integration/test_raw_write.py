"""Raw write transactions: the queue's hot paths on the driver connection, with the
guarantees of a session."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from labrig.errors import InvalidEventPayloadError
from labrig.events.outbox import EventRecord
from labrig.jobs.rows import event_row, insert_events
from labrig.store import Store
from labrig.store.dialects.sqlite import from_db_datetime, to_db_datetime
from labrig.store.models import Meta, OutboxEvent


def _meta(store: Store, key: str) -> str | None:
    return store.meta(key)


def test_a_raw_write_commits_on_exit_and_the_orm_reads_it(store: Store) -> None:
    with store.raw_write() as tx:
        tx.execute("INSERT INTO labrig_meta (key, value) VALUES (:k, :v)", {"k": "raw", "v": "yes"})
    assert _meta(store, "raw") == "yes"


def test_a_raw_write_that_raises_writes_nothing_and_the_next_one_works(store: Store) -> None:
    with pytest.raises(RuntimeError), store.raw_write() as tx:
        tx.execute("INSERT INTO labrig_meta (key, value) VALUES ('half', 'done')")
        raise RuntimeError("stop")
    assert _meta(store, "half") is None
    with store.raw_write() as tx:
        tx.execute("INSERT INTO labrig_meta (key, value) VALUES ('after', 'ok')")
    assert _meta(store, "after") == "ok"


def test_a_failed_statement_rolls_the_whole_transaction_back(store: Store) -> None:
    with store.write() as session:
        session.add(Meta(key="taken", value="first"))
    with pytest.raises(Exception, match="UNIQUE"), store.raw_write() as tx:
        tx.execute("INSERT INTO labrig_meta (key, value) VALUES ('fresh', 'x')")
        tx.execute("INSERT INTO labrig_meta (key, value) VALUES ('taken', 'second')")
    assert _meta(store, "fresh") is None
    assert _meta(store, "taken") == "first"


def test_commit_listeners_fire_only_after_a_commit_that_recorded_events(store: Store) -> None:
    fired: list[str] = []
    store.on_events_committed(lambda: fired.append("commit"))
    with store.raw_write() as tx:
        tx.execute("INSERT INTO labrig_meta (key, value) VALUES ('quiet', 'x')")
    assert fired == []
    with pytest.raises(RuntimeError), store.raw_write() as tx:
        insert_events(tx, [event_row("labrig.custom", {"n": 1})])
        raise RuntimeError("rolled back")
    assert fired == []
    with store.raw_write() as tx:
        insert_events(tx, [event_row("labrig.custom", {"n": 2})])
    assert fired == ["commit"]
    with store.read() as session:
        [row] = session.scalars(select(OutboxEvent)).all()
    record = EventRecord.from_row(row)
    assert record.payload == {"n": 2} and record.known is False
    assert record.recorded_at.tzinfo is UTC


def test_a_catalogued_event_with_a_bad_payload_is_refused_before_anything_is_written(
    store: Store,
) -> None:
    with pytest.raises(InvalidEventPayloadError), store.raw_write() as tx:
        insert_events(tx, [event_row("analysis.stage.requested", {"job_id": "j"})])
    with store.read() as session:
        assert session.scalars(select(OutboxEvent)).all() == []


def test_raw_writes_and_session_writes_from_many_threads_are_serialized(store: Store) -> None:
    def raw(i: int) -> None:
        for j in range(20):
            with store.raw_write() as tx:
                tx.execute(
                    "INSERT INTO labrig_meta (key, value) VALUES (:k, 'r')", {"k": f"r{i}-{j}"}
                )

    def orm(i: int) -> None:
        for j in range(20):
            with store.write() as session:
                session.add(Meta(key=f"o{i}-{j}", value="o"))

    threads = [threading.Thread(target=f, args=(i,)) for i in range(3) for f in (raw, orm)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with store.read() as session:
        keys = {m.key for m in session.scalars(select(Meta))}
    assert {f"r{i}-{j}" for i in range(3) for j in range(20)} <= keys
    assert {f"o{i}-{j}" for i in range(3) for j in range(20)} <= keys


def test_raw_datetimes_are_the_text_the_orm_writes_and_read_back_equal(store: Store) -> None:
    moment = datetime(2026, 11, 29, 10, 0, 0, 5, tzinfo=UTC)
    with store.write() as session:
        row = event_row("labrig.custom", {})
        session.add(OutboxEvent(**{**row, "recorded_at": moment}))
    with store.raw_write() as tx:
        [(stored,)] = tx.execute("SELECT recorded_at FROM outbox_events").fetchall()
    assert stored == to_db_datetime(moment)
    assert from_db_datetime(stored) == moment
    with pytest.raises(ValueError, match="naive"):
        to_db_datetime(datetime(2026, 1, 1))
