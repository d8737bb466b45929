"""At-least-once delivery to idempotent consumers: redelivery changes nothing, failures don't
block."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from labrig.events import EventRecord, record_event
from labrig.events.dispatcher import (
    CATCH_UP_AFTER,
    Dispatcher,
    DispatcherThread,
    Outcome,
    consumer_cursor,
    events_after,
    retry_delay,
)
from labrig.store import Store, open_store
from labrig.store.models import Meta, OutboxCursor
from labrig.store.types import utcnow
from tests.conftest import BACKENDS, store_on

REPO = Path(__file__).resolve().parents[2]


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


def test_two_dispatcher_processes_racing_deliver_each_event_once(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s")
    with store.write() as session:
        session.add(Meta(key="count", value="0"))
    _emit(store, 60)
    store.close()
    child = [
        sys.executable,
        str(REPO / "tests" / "integration" / "dispatch_child.py"),
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


def test_postgresql_keeps_no_cursors_and_every_pass_reads_all(pg_store: Store) -> None:
    """PostgreSQL may commit an event numbered below one already seen, which a cursor
    would skip for ever."""
    _emit(pg_store, 3)
    dispatcher = Dispatcher(pg_store)
    dispatcher.register("count", count_in_session)
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 3
    with pg_store.read() as session:
        assert session.scalar(select(func.count()).select_from(OutboxCursor)) == 0


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
