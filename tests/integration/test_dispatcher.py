"""At-least-once delivery to idempotent consumers: redelivery changes nothing, failures don't block."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from labrig.events import EventRecord, record_event
from labrig.events.dispatcher import Dispatcher, DispatcherThread, Outcome, events_after, retry_delay
from labrig.store import Store, open_store
from labrig.store.models import Meta
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


def test_dispatch_all_delivers_more_than_one_batch_and_waits_for_no_failing_consumer(store: Store) -> None:
    with store.write() as session:  # more events than a pass takes (batch 7 here)
        for i in range(30):
            record_event(session, "plugin.tick", {"i": i})
    dispatcher = Dispatcher(store, batch=7)
    dispatcher.register("count", count_in_session)
    dispatcher.register("broken", lambda e, s: 1 / 0)  # fails, then waits for its retry time
    totals = dispatcher.dispatch_all()
    assert _counter(store) == 30 and totals[Outcome.HANDLED] == 30
    assert totals[Outcome.FAILED] == 30  # each tried once; none again before its retry time: the loop ends


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


def test_a_crash_inside_the_consumer_rolls_back_its_effect_and_the_event_comes_again(store: Store) -> None:
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
    child = [sys.executable, str(REPO / "tests" / "integration" / "dispatch_child.py"), str(tmp_path / "s"), "20"]
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
    thread = DispatcherThread(dispatcher, poll_seconds=30.0)  # a long poll: only the wake-up can explain speed
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
