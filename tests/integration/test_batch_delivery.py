"""A batch of events is delivered as a whole: one savepoint and one inbox statement for the batch,
not two savepoint statements and an insert an event; a handler that raises, or an event another
dispatcher delivered meanwhile, costs the batch nothing it should keep."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from labrig.bootstrap import bootstrap
from labrig.events import EventRecord
from labrig.events.dispatcher import Dispatcher, Outcome
from labrig.jobs.executor import ThreadExecutor
from labrig.results import PUBLISHER
from labrig.store import Store
from labrig.store.models import InboxEntry, Meta
from tests.conftest import BACKENDS, store_on
from tests.integration.test_dispatcher import _emit, count_in_session
from tests.support.plans import statements


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    return store_on(request, request.param)


def _marks(store: Store) -> dict[str, str]:
    with store.read() as session:
        return {m.key: m.value for m in session.scalars(select(Meta)) if m.key.startswith("i")}


def mark(event: EventRecord, session: Session) -> None:
    """A consumer's own write, one row an event."""
    session.add(Meta(key=f"i{event.payload['i']}", value="seen"))


def test_a_batch_costs_one_savepoint_and_one_inbox_statement(store: Store) -> None:
    _emit(store, 40)
    dispatcher = Dispatcher(store)
    dispatcher.register("mark", mark)
    with statements(store) as sent:
        assert dispatcher.deliver_pending(dispatcher.consumers["mark"], 50)[Outcome.HANDLED] == 40
    words = [sql.split(None, 1)[0].upper() for sql, _ in sent]
    assert words.count("SAVEPOINT") == 1
    assert len([sql for sql, _ in sent if "INTO consumer_inbox" in sql]) == 1
    assert len(_marks(store)) == 40
    with store.read() as session:
        assert session.scalar(select(func.count()).select_from(InboxEntry)) == 40


def test_a_pass_delivers_in_transactions_as_large_as_its_database_allows(store: Store) -> None:
    """SQLite's delivering transaction holds the one write lock: 50 events at a time. PostgreSQL's
    holds only the consumer's cursor: the pass's whole batch of 200, in one."""
    _emit(store, 200)
    dispatcher = Dispatcher(store)
    dispatcher.register("mark", mark)
    with statements(store) as sent:
        assert dispatcher.dispatch_once()[Outcome.HANDLED] == 200
    inbox_writes = len([sql for sql, _ in sent if "INTO consumer_inbox" in sql])
    assert inbox_writes == {"sqlite": 4, "postgresql": 1}[store.dialect]
    assert len(_marks(store)) == 200


def test_a_handler_that_raises_keeps_the_rest_of_its_batch_and_is_called_once(
    store: Store,
) -> None:
    _emit(store, 6)
    calls: list[int] = []

    def refuses_i3(event: EventRecord, session: Session) -> None:
        calls.append(event.payload["i"])
        mark(event, session)  # written, then the consumer dies on event 3: rolled back alone
        if event.payload["i"] == 3:
            raise ConnectionError("archive unreachable")

    dispatcher = Dispatcher(store)
    dispatcher.register("flaky", refuses_i3)
    counts = dispatcher.deliver_pending(dispatcher.consumers["flaky"])
    assert (counts[Outcome.HANDLED], counts[Outcome.FAILED]) == (5, 1)
    assert sorted(_marks(store)) == ["i0", "i1", "i2", "i4", "i5"]
    [failure] = dispatcher.failures()
    assert failure.attempts == 1 and "archive unreachable" in failure.last_error
    assert calls.count(3) == 1  # its failure is recorded, not tried again in the same pass
    assert calls.count(4) == calls.count(5) == 1  # those after it: as a whole, once


def test_an_event_delivered_by_another_dispatcher_meanwhile_is_a_duplicate(
    pg_store: Store,
) -> None:
    """PostgreSQL: another dispatcher's single delivery commits while this one's batch is in
    flight (SQLite's one writer cannot). The batch's inbox statement then meets its entry; the
    batch is delivered again one by one, and that event counts once."""
    store = pg_store
    _emit(store, 3)
    dispatcher, other = Dispatcher(store), Dispatcher(store)
    for d in (dispatcher, other):
        d.register("count", count_in_session)
    consumer = dispatcher.consumers["count"]
    [*_, last] = dispatcher.pending(consumer, 10)

    def delivers_the_last_one_first(event: EventRecord, session: Session) -> None:
        if event.payload["i"] == 0:
            done = threading.Thread(target=lambda: other.deliver(other.consumers["count"], last))
            done.start()
            done.join(30)
        count_in_session(event, session)

    dispatcher.consumers["count"] = type(consumer)("count", delivers_the_last_one_first)
    counts = dispatcher.deliver_pending(dispatcher.consumers["count"])
    assert (counts[Outcome.HANDLED], counts[Outcome.DUPLICATE]) == (2, 1)
    assert int(store.meta("count") or 0) == 3  # each event counted once


def test_the_publisher_reads_a_batchs_jobs_in_one_statement(store: Store) -> None:
    """The result publisher is handed the jobs of its batch's events read together
    (``load_jobs``), not one statement an event."""
    services = bootstrap(store=store)
    for i in range(12):
        services.queue.enqueue("labrig.selftest", [f"{i:064x}"], {"steps": 0})
    assert ThreadExecutor(services.queue, workers=2).run(drain=True).finished == 12
    publisher = services.dispatcher.consumers[PUBLISHER]
    with statements(store) as sent:
        assert services.dispatcher.deliver_pending(publisher, 50)[Outcome.HANDLED] == 12
    read_jobs = [sql for sql, _ in sent if "FROM jobs" in sql]
    assert len(read_jobs) == 1, read_jobs
