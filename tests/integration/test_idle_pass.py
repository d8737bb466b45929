"""A dispatcher pass with nothing to deliver is one read statement for every consumer, served by the
outbox's index from each cursor on, however long the history behind the cursors."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from labrig.events import record_event
from labrig.events.dispatcher import Dispatcher, Outcome
from labrig.store import Store
from tests.conftest import BACKENDS, store_on
from tests.support.plans import plans, statements

HISTORY = 20_000


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    return store_on(request, request.param)


def _history(store: Store) -> None:
    """20,000 events, half of them ticks, every one in the inbox of both consumers."""
    series = (
        "generate_series(1, :n) AS g"
        if store.dialect == "postgresql"
        else "(WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < :n) "
        "SELECT g FROM s)"
    )
    with store.write() as session:
        session.execute(
            text(
                "INSERT INTO outbox_events (event_id, name, schema_version, known, payload, "
                "recorded_at) SELECT 'h-' || g, CASE WHEN g % 2 = 0 THEN 'plugin.tick' "
                f"ELSE 'plugin.tock' END, 0, false, '{{}}', CURRENT_TIMESTAMP FROM {series}"
            ),
            {"n": HISTORY},
        )
        for consumer in ("all", "ticks"):
            session.execute(
                text(
                    "INSERT INTO consumer_inbox (consumer, event_id, processed_at) "
                    "SELECT :c, event_id, CURRENT_TIMESTAMP FROM outbox_events"
                ),
                {"c": consumer},
            )
        session.execute(text("ANALYZE"))


def test_an_idle_pass_is_one_statement_that_reads_the_outbox_from_each_cursor_on(
    store: Store,
) -> None:
    _history(store)
    got: list[str] = []
    dispatcher = Dispatcher(store)
    dispatcher.register("all", lambda e, s: got.append(e.name))
    dispatcher.register("ticks", lambda e, s: got.append(e.name), names={"plugin.tick"})
    dispatcher.dispatch_all()  # the cursors move past the history, delivering nothing
    assert got == []

    with statements(store) as sent:
        assert dispatcher.dispatch_once() == dict.fromkeys(Outcome, 0)
    assert len(sent) == 1, [s for s, _ in sent]
    [plan] = plans(store, sent)
    if store.dialect == "postgresql":
        assert "Index Scan using ix_outbox_events_txid on outbox_events" in plan, plan
        assert "Seq Scan on outbox_events" not in plan, plan
    else:
        assert "SEARCH outbox_events USING INTEGER PRIMARY KEY (rowid>?)" in plan, plan
        assert "SCAN outbox_events" not in plan, plan

    # the one statement still finds what is due: a tick for both, a tock for one
    with store.write() as session:
        record_event(session, "plugin.tick", {})
        record_event(session, "plugin.tock", {})
    assert dispatcher.dispatch_once()[Outcome.HANDLED] == 3
    assert sorted(got) == ["plugin.tick", "plugin.tick", "plugin.tock"]
    with statements(store) as sent:
        assert dispatcher.dispatch_once() == dict.fromkeys(Outcome, 0)
    assert len(sent) == 1


def test_on_postgresql_the_idle_pass_is_never_prepared(pg_store: Store) -> None:
    """psycopg prepares a statement run five times; PostgreSQL then plans it without its
    parameters, and that plan read a 3,000,000-event outbox whole (300 ms a pass). The pass is run
    unprepared, on the connection it always takes."""
    store = pg_store
    dispatcher = Dispatcher(store)
    dispatcher.register("all", lambda e, s: None)
    for _ in range(12):
        dispatcher.dispatch_once()
    with store.engine.connect() as conn:  # the pool's one connection, the passes' own
        prepared = conn.execute(
            text("SELECT statement FROM pg_prepared_statements WHERE statement LIKE :survey"),
            {"survey": "%pg_snapshot_xmin(pg_current_snapshot())%EXISTS%"},
        ).all()
        assert conn.connection.driver_connection.prepare_threshold is not None  # left as it was
    assert prepared == []
