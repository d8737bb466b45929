"""Events are written in the transaction of the change that causes them."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, select

from labrig.errors import InvalidEventPayloadError
from labrig.events import EventRecord, events_after, record_event
from labrig.store import Store
from labrig.store.models import Meta, OutboxEvent
from tests.conftest import BACKENDS, store_on

STARTED = {
    "capture_id": "c1",
    "session_id": "s1",
    "device_id": "virtual-0",
    "manifest_path": "/m/c1.json",
}


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_on(request, request.param)


def _count(store: Store) -> int:
    with store.read() as session:
        return session.scalar(select(func.count()).select_from(OutboxEvent)) or 0


def test_event_and_state_change_commit_together(store: Store) -> None:
    with store.write() as session:
        session.add(Meta(key="capture:c1", value="recording"))
        row = record_event(session, "capture.started", STARTED)
        assert row.seq >= 1  # flushed: the sequence number is known inside the transaction
    [event] = events_after(store, 0)
    assert (event.name, event.payload, event.known, event.schema_version) == (
        "capture.started",
        STARTED,
        True,
        1,
    )
    assert store.meta("capture:c1") == "recording"


def test_a_failed_transaction_leaves_neither_the_change_nor_the_event(store: Store) -> None:
    with pytest.raises(RuntimeError), store.write() as session:
        session.add(Meta(key="capture:c2", value="recording"))
        record_event(session, "capture.started", STARTED)
        raise RuntimeError("power cut before commit")
    assert _count(store) == 0
    assert store.meta("capture:c2") is None


def test_an_invalid_payload_rolls_back_the_whole_transaction(store: Store) -> None:
    with pytest.raises(InvalidEventPayloadError), store.write() as session:
        session.add(Meta(key="capture:c3", value="recording"))
        record_event(session, "capture.started", {"capture_id": "c3"})
    assert _count(store) == 0
    assert store.meta("capture:c3") is None


def test_wrong_schema_version_for_a_catalogued_event_is_refused(store: Store) -> None:
    with (
        pytest.raises(InvalidEventPayloadError, match="version 1, not 2"),
        store.write() as session,
    ):
        record_event(session, "capture.started", STARTED, version=2)


def test_non_json_payload_is_refused_with_a_code(store: Store) -> None:
    with pytest.raises(InvalidEventPayloadError) as info, store.write() as session:
        record_event(session, "plugin.custom", {"when": object()})
    assert info.value.code == "LABRIG_INVALID_EVENT_PAYLOAD"


def test_sequence_is_global_and_increasing_and_ids_unique(store: Store) -> None:
    for i in range(3):
        with store.write() as session:
            record_event(session, "capture.started", STARTED | {"capture_id": f"c{i}"})
            record_event(
                session,
                "attempt.created",
                {"attempt_id": f"a{i}", "session_id": "s1", "capture_ids": [f"c{i}"]},
            )
    events = events_after(store, 0)
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    assert len({e.seq for e in events}) == 6
    assert len({e.event_id for e in events}) == 6
    assert all(uuid.UUID(e.event_id) for e in events)
    assert [e.payload.get("capture_id", e.payload.get("attempt_id")) for e in events] == [
        "c0",
        "a0",
        "c1",
        "a1",
        "c2",
        "a2",
    ]


def test_uncatalogued_names_are_recorded_and_flagged(store: Store) -> None:
    with store.write() as session:
        record_event(session, "plugin.force_plate.zeroed", {"offset_n": 0.4}, version=3)
    [event] = events_after(store, 0)
    assert isinstance(event, EventRecord)
    assert (event.name, event.known, event.schema_version, event.payload) == (
        "plugin.force_plate.zeroed",
        False,
        3,
        {"offset_n": 0.4},
    )
    assert event.to_json()["known"] is False


def test_commit_listeners_hear_only_commits_that_recorded_events(store: Store) -> None:
    heard: list[int] = []
    store.on_events_committed(lambda: heard.append(1))
    with store.write() as session:
        session.add(Meta(key="quiet", value="no event"))
    assert heard == []
    with store.write() as session:
        record_event(session, "capture.started", STARTED)
    assert heard == [1]
    with pytest.raises(RuntimeError), store.write() as session:
        record_event(session, "capture.started", STARTED)
        raise RuntimeError("rolled back")
    with store.write() as session:
        session.add(Meta(key="quiet2", value="no event"))
    assert heard == [1]
