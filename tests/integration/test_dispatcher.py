"""At-least-once delivery to idempotent consumers: redelivery changes nothing, failures don't
block."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.orm import Session

from labrig.events import DispatcherThread, EventRecord, events_after, record_event
from labrig.events.cursors import CATCH_UP_AFTER, TransactionCursors, consumer_cursor
from labrig.events.dispatcher import Consumer, Dispatcher, Outcome
from labrig.events.failures import retry_delay
from labrig.store import Store, open_store
from labrig.store.models import InboxEntry, Meta, OutboxEvent
from labrig.store.types import utcnow
from tests.conftest import BACKENDS, store_on

REPO = Path(__file__).resolve().parents[2]
CHILD = "tests.integration.dispatch_child"


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_on(request, request.param)


def _emit(store: Store, n: int, name: str = "plugin.tick") -> None:
    for i in range(n):
        with store.write() as session:
            record_event(session, name, {"i": i})


def _counter(store: Store) -> int:
    return int(store.meta("count") or 0)


def count_in_session(event: EventRecord, session: Session) -> None:
    row = session.get(Meta, "count")
    if row is None:
        session.add(Meta(key="count", value="1"))
    else:
        row.value = str(int(row.value) + 1)


def test_each_consumer_gets_each_event_once(store: Store) -> None:
    _emit(store, 5)
    dispatcher = Dispatcher(store)
    seen: list[int] = []
    dispatcher.register("count", count_in_session)
    dispatcher.register("log", lambda e, s: seen.append(e.payload["i"]))
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 10
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 0
    assert _counter(store) == 5
    assert seen == [0, 1, 2, 3, 4]


def test_dispatch_all_delivers_more_than_one_batch_and_waits_for_no_failing_consumer(
    store: Store,
) -> None:
    with store.write() as session:  # more events than a pass takes (batch 7 here)
        for i in range(30):
            record_event(session, "plugin.tick", {"i": i})
    # the clock stands still: no retry time (1 s away) comes while the loop runs, however slow
    now = utcnow()
    dispatcher = Dispatcher(store, batch=7, clock=lambda: now)
    dispatcher.register("count", count_in_session)
    dispatcher.register("broken", lambda e, s: 1 / 0)  # fails, then waits for its retry time
    totals = dispatcher.dispatch_all()
    assert _counter(store) == 30 and totals[Outcome.HANDLED] == 30
    # each tried once; none again before its retry time: the loop ends
    assert totals[Outcome.FAILED] == 30


def test_redelivery_of_a_processed_event_changes_nothing(store: Store) -> None:
    _emit(store, 1)
    [event] = events_after(store, 0)
    dispatcher = Dispatcher(store)
    dispatcher.register("count", count_in_session)
    consumer = dispatcher.consumers["count"]
    assert dispatcher.deliver(consumer, event) is Outcome.HANDLED
    assert dispatcher.deliver(consumer, event) is Outcome.DUPLICATE
    # a second dispatcher (another process after a restart) redelivers: still nothing changes
    other = Dispatcher(store)
    other.register("count", count_in_session)
    assert other.deliver(other.consumers["count"], event) is Outcome.DUPLICATE
    assert other.dispatch_once()[Outcome.HANDLED] == 0
    assert _counter(store) == 1


def test_a_crash_inside_the_consumer_rolls_back_its_effect_and_the_event_comes_again(
    store: Store,
) -> None:
    _emit(store, 1)
    calls: list[str] = []

    def flaky(event: EventRecord, session: Session) -> None:
        count_in_session(event, session)  # the effect is written, then the consumer dies
        calls.append("called")
        if len(calls) == 1:
            raise ConnectionError("archive unreachable")

    now = [utcnow()]
    dispatcher = Dispatcher(store, clock=lambda: now[0])
    dispatcher.register("flaky", flaky)
    assert dispatcher.dispatch_once()[Outcome.FAILED] == 1
    assert _counter(store) == 0  # rolled back with the failed delivery
    [failure] = dispatcher.failures()
    assert (failure.consumer, failure.attempts) == ("flaky", 1)
    assert "ConnectionError: archive unreachable" in failure.last_error
    assert dispatcher.dispatch_once() == dict.fromkeys(Outcome, 0)  # not before its retry time
    now[0] += retry_delay(1) + timedelta(milliseconds=1)
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 1
    assert _counter(store) == 1
    assert dispatcher.failures() == []


def test_a_failing_consumer_does_not_block_the_others_or_its_own_later_events(store: Store) -> None:
    _emit(store, 3)
    good: list[int] = []
    picky: list[int] = []

    def refuses_first(event: EventRecord, session: Session) -> None:
        if event.payload["i"] == 0:
            raise ValueError("cannot handle i=0")
        picky.append(event.payload["i"])

    dispatcher = Dispatcher(store)
    dispatcher.register("picky", refuses_first)
    dispatcher.register("good", lambda e, s: good.append(e.payload["i"]))
    counts = dispatcher.dispatch_once()
    assert counts[Outcome.FAILED] == 1 and counts[Outcome.HANDLED] == 5
    assert good == [0, 1, 2] and picky == [1, 2]


def test_failures_back_off_exponentially_with_a_cap() -> None:
    assert [retry_delay(n).total_seconds() for n in (1, 2, 3, 4)] == [1, 2, 4, 8]
    assert retry_delay(50) == timedelta(minutes=5)


def test_consumers_can_limit_themselves_to_some_events(store: Store) -> None:
    _emit(store, 2, name="plugin.tick")
    _emit(store, 1, name="plugin.tock")
    got: list[str] = []
    dispatcher = Dispatcher(store)
    dispatcher.register("tock-only", lambda e, s: got.append(e.name), names={"plugin.tock"})
    dispatcher.dispatch_once()
    assert got == ["plugin.tock"]


def test_a_pass_ends_a_consumers_deliveries_once_a_transaction_has_every_event_due(
    store: Store,
) -> None:
    """Three events fit in one transaction: the pass writes once, not again to find nothing."""
    dispatcher = Dispatcher(store)
    dispatcher.register("count", count_in_session)
    _emit(store, 1)
    dispatcher.dispatch_once()  # the first delivery makes PostgreSQL's cursor row, apart
    _emit(store, 3)
    commits: list[object] = []
    count = commits.append  # one bound method: the listener removed is the one added
    event.listen(store.engine, "commit", count)
    try:
        assert dispatcher.dispatch_once()[Outcome.HANDLED] == 3
    finally:
        event.remove(store.engine, "commit", count)
    assert _counter(store) == 4
    assert len(commits) == 1


def test_events_committed_while_a_pass_delivers_wait_for_the_next_pass(pg_store: Store) -> None:
    """A worker commits while its dispatcher delivers: the pass does not chase each commit with a
    transaction of its own (it took what was due when it read), the next pass takes them."""
    store = pg_store
    got: list[int] = []

    def commit_another(event: EventRecord, session: Session) -> None:
        got.append(event.payload["i"])
        if len(got) < 5:  # as a worker's executor would, on another connection
            with store.write() as other:
                record_event(other, "plugin.tick", {"i": len(got)})

    _emit(store, 1)
    dispatcher = Dispatcher(store)
    dispatcher.register("log", commit_another)
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 1 and got == [0]
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 1 and got == [0, 1]
    assert dispatcher.dispatch_all()[Outcome.HANDLED] == 3 and got == [0, 1, 2, 3, 4]


def test_two_dispatcher_processes_racing_deliver_each_event_once(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s")
    with store.write() as session:
        session.add(Meta(key="count", value="0"))
    _emit(store, 60)
    store.close()
    child = [
        sys.executable,
        "-m",
        CHILD,
        str(tmp_path / "s"),
        "20",
    ]
    procs = [subprocess.Popen(child, cwd=REPO) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    store = open_store(tmp_path / "s")
    assert _counter(store) == 60
    store.close()


def test_background_thread_is_woken_by_commits_and_announces_new_events(store: Store) -> None:
    heard: list[str] = []
    handled: list[str] = []
    dispatcher = Dispatcher(store)
    dispatcher.register("h", lambda e, s: handled.append(e.name))
    # a long poll: only the wake-up can explain speed
    thread = DispatcherThread(dispatcher, poll_seconds=30.0)
    thread.listeners.append(lambda e: heard.append(e.name))
    thread.start()
    try:
        started = datetime.now()
        _emit(store, 1, name="plugin.hello")
        while len(handled) < 1 and datetime.now() - started < timedelta(seconds=10):
            time.sleep(0.01)
        assert heard == ["plugin.hello"] and handled == ["plugin.hello"]
        assert datetime.now() - started < timedelta(seconds=10)
    finally:
        thread.stop()


def test_a_background_thread_with_no_listener_does_not_read_the_new_events_for_them(
    store: Store,
) -> None:
    """A worker's dispatcher thread has nobody to tell of new events: its passes deliver, and read
    nothing more (reading up to 1,000 new events a pass cost a busy worker more than its jobs)."""
    handled: list[str] = []
    dispatcher = Dispatcher(store)
    dispatcher.register("h", lambda e, s: handled.append(e.name))
    thread = DispatcherThread(dispatcher, poll_seconds=30.0, settle_seconds=0.0)
    sent: list[str] = []

    def capture(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    event.listen(store.engine, "before_cursor_execute", capture)
    thread.start()
    try:
        started = datetime.now()
        _emit(store, 2, name="plugin.hello")
        while len(handled) < 2 and datetime.now() - started < timedelta(seconds=10):
            time.sleep(0.01)
        assert handled == ["plugin.hello", "plugin.hello"]
    finally:
        thread.stop()
        event.remove(store.engine, "before_cursor_execute", capture)
    announcing = [
        s for s in sent if "FROM outbox_events" in s and "consumer_inbox" not in s and "seq >" in s
    ]
    assert announcing == []


# -- cursors: a pass reads on from where each consumer stands (SQLite, where commits are in number
# order) --


def _cursor(store: Store, consumer: str, names: set[str] | None = None) -> int:
    with store.read() as session:
        return consumer_cursor(session, consumer, names)


def _last(store: Store) -> int:
    return events_after(store, 0, limit=100_000)[-1].seq


def test_a_cursor_passes_what_its_consumer_handled_and_what_it_does_not_take(
    sqlite_store: Store,
) -> None:
    store = sqlite_store
    _emit(store, 3, name="plugin.tick")
    _emit(store, 2, name="plugin.tock")
    got: list[int] = []
    dispatcher = Dispatcher(store)
    dispatcher.register("ticks", lambda e, s: got.append(e.payload["i"]), names={"plugin.tick"})
    dispatcher.dispatch_once()
    # past the tocks too
    assert got == [0, 1, 2] and _cursor(store, "ticks", {"plugin.tick"}) == _last(store)
    _emit(store, 2, name="plugin.tick")
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 2 and got == [0, 1, 2, 0, 1]
    assert _cursor(store, "ticks", {"plugin.tick"}) == _last(store)
    statement, parameters = _pending_statement(store, dispatcher, "ticks")
    with store.read() as session:  # a pass reads the outbox from the cursor on, in number order
        connection = session.connection()
        plan = [
            str(row[-1])
            for row in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
        ]
        indexes = {
            row[0]
            for row in connection.exec_driver_sql(
                "SELECT name FROM sqlite_master WHERE type = 'index'"
            )
        }
    assert plan[0].startswith("SEARCH outbox_events USING INTEGER PRIMARY KEY (rowid>?)"), plan
    assert "ix_outbox_events_name" not in indexes  # no page of it written with every event


def _pending_statement(store: Store, dispatcher: Dispatcher, consumer: str) -> tuple[str, Any]:
    """The SQL and parameters of the consumer's pending query, as sent to the database."""
    sent: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_args: Any) -> None:
        sent.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", capture)
    try:
        dispatcher.pending(dispatcher.consumers[consumer], 10)
    finally:
        event.remove(store.engine, "before_cursor_execute", capture)
    return next((s, p) for s, p in sent if "FROM outbox_events" in s and "ORDER BY" in s)


def test_a_failing_event_holds_its_consumers_cursor_until_it_is_delivered(
    sqlite_store: Store,
) -> None:
    store = sqlite_store
    _emit(store, 4)
    failed_once: list[int] = []

    def refuses_i1_once(event: EventRecord, session: Session) -> None:
        if event.payload["i"] == 1 and not failed_once:
            failed_once.append(1)
            raise ConnectionError("archive unreachable")

    now = [utcnow()]
    dispatcher = Dispatcher(store, clock=lambda: now[0])
    dispatcher.register("flaky", refuses_i1_once)
    counts = dispatcher.dispatch_once()
    # later events were not held up
    assert counts[Outcome.HANDLED] == 3 and counts[Outcome.FAILED] == 1
    first_seq = events_after(store, 0)[0].seq
    assert _cursor(store, "flaky") == first_seq  # just below the failed event: it is read again
    now[0] += retry_delay(1) + timedelta(milliseconds=1)
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 1
    assert _cursor(store, "flaky") == _last(store) and dispatcher.failures() == []


def test_a_consumer_of_rare_events_has_its_cursor_moved_only_when_far_behind(
    sqlite_store: Store,
) -> None:
    store = sqlite_store
    dispatcher = Dispatcher(store)
    dispatcher.register("rare", lambda e, s: None, names={"plugin.rare"})
    with store.write() as session:
        for i in range(CATCH_UP_AFTER):
            record_event(session, "plugin.tick", {"i": i})
    dispatcher.dispatch_once()
    assert _cursor(store, "rare", {"plugin.rare"}) == 0  # not far enough behind to be worth a write
    _emit(store, 1)
    dispatcher.dispatch_once()
    assert _cursor(store, "rare", {"plugin.rare"}) == _last(store) == CATCH_UP_AFTER + 1
    _emit(store, 1, name="plugin.rare")
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 1


def test_a_consumer_registered_later_gets_every_earlier_event(store: Store) -> None:
    _emit(store, 3)
    dispatcher = Dispatcher(store)
    dispatcher.register("first", lambda e, s: None)
    dispatcher.dispatch_once()
    late: list[int] = []
    dispatcher.register("late", lambda e, s: late.append(e.payload["i"]))
    dispatcher.dispatch_once()
    assert late == [0, 1, 2]


# -- PostgreSQL: commits land out of number order, dispatchers run side by side --


def _position(store: Store, consumer: str, names: set[str] | None = None) -> int:
    with store.read() as session:
        named = Consumer(consumer, lambda e, s: None, frozenset(names) if names else None)
        return TransactionCursors.position(session, named)


def _txid(store: Store, seq: int) -> int:
    with store.read() as session:
        return int(session.scalar(select(OutboxEvent.txid).where(OutboxEvent.seq == seq)))


def test_events_committed_late_behind_higher_numbers_are_still_delivered(pg_store: Store) -> None:
    """Two transactions draw their numbers, then wait; later ones commit first and are delivered.
    The cursor stays below the held transactions however far the numbers run ahead, and their
    events, committed last and in the other order, are delivered too."""
    store = pg_store
    got: list[int] = []
    dispatcher = Dispatcher(store)
    dispatcher.register("log", lambda e, s: got.append(e.payload["i"]))
    held = [Session(store.engine), Session(store.engine)]
    held_seqs = []
    for i, session in enumerate(held):
        session.begin()
        held_seqs.append(record_event(session, "plugin.tick", {"i": 100 + i}).seq)
    try:
        for i in range(3):  # numbered above both held events, committed before them
            with store.write() as session:
                assert record_event(session, "plugin.tick", {"i": i}).seq > max(held_seqs)
        assert dispatcher.dispatch_once()[Outcome.HANDLED] == 3 and got == [0, 1, 2]
        first_held_txid = min(_txid_of_open(s) for s in held)
        assert 0 < _position(store, "log") <= first_held_txid  # moved, but not past them
        held[1].commit()  # the later-numbered one first
        assert dispatcher.dispatch_once()[Outcome.HANDLED] == 1 and got[-1] == 101
        assert _position(store, "log") <= first_held_txid  # the other still holds it
        held[0].commit()
        assert dispatcher.dispatch_once()[Outcome.HANDLED] == 1 and got[-1] == 100
        assert _position(store, "log") > first_held_txid
        assert dispatcher.dispatch_all()[Outcome.HANDLED] == 0
        assert sorted(got) == [0, 1, 2, 100, 101]
    finally:
        for session in held:
            session.close()


def _txid_of_open(session: Session) -> int:
    """The id of the transaction ``session`` holds open."""
    return int(session.scalar(text("SELECT CAST(CAST(pg_current_xact_id() AS text) AS bigint)")))


def test_a_pass_on_postgresql_reads_only_from_the_cursor_on_through_its_index(
    pg_store: Store,
) -> None:
    store = pg_store
    with store.write() as session:  # a history: 20,000 events, every one in the inbox
        session.execute(
            text(
                "INSERT INTO outbox_events (event_id, name, schema_version, known, payload, "
                "recorded_at) SELECT 'h-' || g, 'plugin.tick', 0, false, '{}', now() "
                "FROM generate_series(1, 20000) AS g"
            )
        )
        session.execute(
            text(
                "INSERT INTO consumer_inbox (consumer, event_id, processed_at) "
                "SELECT 'count', event_id, now() FROM outbox_events"
            )
        )
    with store.write() as session:  # as autovacuum would (a plan without statistics is blind)
        session.execute(text("ANALYZE outbox_events"))
        session.execute(text("ANALYZE consumer_inbox"))
    dispatcher = Dispatcher(store)
    dispatcher.register("count", lambda e, s: None)
    # nothing to deliver: the cursor moves past the history
    assert dispatcher.deliver_pending(dispatcher.consumers["count"]) == dict.fromkeys(Outcome, 0)
    with store.read() as session:
        last_txid = session.scalar(select(func.max(OutboxEvent.txid)))
    assert _position(store, "count") > last_txid
    _emit(store, 1)  # and the next event is still delivered
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 1
    statement, parameters = _pending_statement(store, dispatcher, "count")
    with store.read() as session:
        plan = "\n".join(
            row[0]
            for row in session.connection().exec_driver_sql("EXPLAIN " + statement, parameters)
        )
    assert "Index Scan using ix_outbox_events_txid on outbox_events" in plan, plan
    assert "Seq Scan on outbox_events" not in plan, plan


def test_the_inbox_is_looked_up_by_its_key_for_each_event_read_whatever_the_statistics(
    pg_store: Store,
) -> None:
    """A new catalog has no statistics yet (autovacuum analyses a table a minute or more after it
    grew): PostgreSQL then took the consumer's inbox for one row, read all of it and compared each
    event with every entry, 2 ms a pass once a few hundred events were delivered, growing with the
    inbox. An event is looked up in the inbox by its key, one probe an event read."""
    store = pg_store
    dispatcher = Dispatcher(store)
    dispatcher.register("count", lambda e, s: None)
    with store.write() as session:
        for i in range(300):
            record_event(session, "plugin.tick", {"i": i})
    assert dispatcher.dispatch_all()[Outcome.HANDLED] == 300
    _emit(store, 5)
    statement, parameters = _pending_statement(store, dispatcher, "count")
    with store.read() as session:
        plan = "\n".join(
            row[0]
            for row in session.connection().exec_driver_sql(
                "EXPLAIN (ANALYZE, COSTS OFF) " + statement, parameters
            )
        )
    assert "consumer_inbox_pkey on consumer_inbox" in plan and "SubPlan" in plan, plan
    assert "Anti Join" not in plan and "Materialize" not in plan, plan
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 5


def test_a_dispatcher_skips_a_consumer_whose_events_another_is_delivering(
    pg_store: Store,
) -> None:
    """No work done twice: while one dispatcher delivers a consumer's events, another passes over
    that consumer at once (neither waits nor fails on the inbox's key), and delivers the rest
    afterwards."""
    store = pg_store
    with store.write() as session:
        session.add(Meta(key="count", value="0"))
    _emit(store, 6)
    inside, release = threading.Event(), threading.Event()

    def slow(event: EventRecord, session: Session) -> None:
        inside.set()
        assert release.wait(60)
        count_in_session(event, session)

    first = Dispatcher(store, per_transaction=3)
    first.register("counter", slow)
    # another process: a store of its own (one process's writes wait for each other)
    elsewhere = open_store(store.root, db=str(store.engine.url.render_as_string(False)))
    second = Dispatcher(elsewhere, per_transaction=3)
    second.register("counter", count_in_session)
    worker = threading.Thread(target=lambda: first.deliver_pending(first.consumers["counter"]))
    worker.start()
    try:
        assert inside.wait(60)
        # the first holds the consumer's deliveries: nothing for the second, at once
        assert second.deliver_pending(second.consumers["counter"]) == dict.fromkeys(Outcome, 0)
    finally:
        release.set()
        worker.join(60)
    try:
        totals = second.dispatch_all()
    finally:
        elsewhere.close()
    assert totals[Outcome.HANDLED] == 3 and totals[Outcome.DUPLICATE] == 0
    assert _counter(store) == 6


def test_two_dispatcher_processes_on_postgresql_deliver_each_event_once(
    tmp_path: Path, postgres: Any
) -> None:
    url = postgres.url()
    store = open_store(tmp_path / "s", db=url)
    with store.write() as session:
        session.add(Meta(key="count", value="0"))
    _emit(store, 60)
    store.close()
    # as a module: run as a script, its folder's queue/ would stand in for the standard library's
    child = [sys.executable, "-m", CHILD]
    env = {**os.environ, "LABRIG_DB": url}
    procs = [
        subprocess.Popen([*child, str(tmp_path / "s"), "20"], cwd=REPO, env=env) for _ in range(2)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    store = open_store(tmp_path / "s", db=url)
    try:
        # a pass that found the consumer claimed by the other delivered nothing: the children's
        # 40 passes of 7 may leave some; one more dispatcher delivers those, and nothing twice
        by_children = _counter(store)
        assert by_children > 0
        dispatcher = Dispatcher(store)
        dispatcher.register("counter", count_in_session)
        totals = dispatcher.dispatch_all()
        assert totals[Outcome.HANDLED] == 60 - by_children and totals[Outcome.DUPLICATE] == 0
        assert _counter(store) == 60
        with store.read() as session:
            inbox = session.scalar(select(func.count()).select_from(InboxEntry))
        assert inbox == 60
    finally:
        store.close()


def test_a_consumer_that_takes_more_names_than_before_gets_the_earlier_events_of_them(
    sqlite_store: Store,
) -> None:
    """A new version of a consumer may take events its cursor passed over: that cursor
    no longer counts."""
    store = sqlite_store
    _emit(store, 2, name="plugin.tick")
    _emit(store, 1, name="plugin.tock")
    before = Dispatcher(store)
    before.register("c", lambda e, s: None, names={"plugin.tick"})
    before.dispatch_once()
    assert _cursor(store, "c", {"plugin.tick"}) == _last(store)
    got: list[str] = []
    after = Dispatcher(store)
    after.register("c", lambda e, s: got.append(e.name), names={"plugin.tick", "plugin.tock"})
    after.dispatch_once()
    assert got == ["plugin.tock"]  # the ticks are in its inbox; the tock it passed over comes now
    assert _cursor(store, "c", {"plugin.tick", "plugin.tock"}) == _last(store)
