"""``labrig captures`` a page at a time: each filter, page and count agrees with the captures
filtered by hand on both databases, and a page of one state is read through the index of states
and dates, never by sorting every capture (plan pinned on SQLite)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest

from labrig.capture.listing import CaptureQuery, count_captures, read_captures
from labrig.store import Store, utcnow
from labrig.store.models import Capture
from tests.conftest import BACKENDS, store_on
from tests.support.plans import plans, statements

STATES = ("committed", "committed", "provisional", "committed", "salvaged", "abandoned")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    return store_on(request, request.param)


def _captures(store: Store, n: int = 30) -> list[dict[str, Any]]:
    start, made = utcnow() - timedelta(days=n), []
    with store.write() as session:
        for i in range(n):
            fact = {
                "id": str(uuid.uuid4()),
                "state": STATES[i % len(STATES)],
                "device": f"cam-{i % 3}",
                "started": start + timedelta(days=i),
            }
            session.add(
                Capture(
                    id=fact["id"],
                    device_id=fact["device"],
                    origin="recorded",
                    state=fact["state"],
                    mode="{}",
                    verification="{}",
                    started_at=fact["started"],
                )
            )
            made.append(fact)
    return made


def test_every_filter_page_and_count_agrees_with_the_captures_filtered_by_hand(
    store: Store,
) -> None:
    made = _captures(store)
    middle = made[15]["started"]
    cases = [
        (CaptureQuery(), lambda f: True),
        (CaptureQuery(("committed",), newest_first=True), lambda f: f["state"] == "committed"),
        (CaptureQuery(device="cam-1"), lambda f: f["device"] == "cam-1"),
        (CaptureQuery(since=middle, newest_first=True), lambda f: f["started"] >= middle),
        (
            CaptureQuery(("committed", "salvaged"), device="cam-0", until=middle),
            lambda f: (
                f["state"] in ("committed", "salvaged")
                and f["device"] == "cam-0"
                and f["started"] < middle
            ),
        ),
    ]
    with store.read() as session:
        for query, keep in cases:
            whole = [f["id"] for f in made if keep(f)]
            whole = whole[::-1] if query.newest_first else whole
            assert [c.id for c in read_captures(session, query)] == whole, query
            assert count_captures(session, query) == len(whole), query
            pages: list[str] = []
            for offset in range(0, len(whole) + 4, 4):
                page = CaptureQuery(
                    query.states,
                    query.device,
                    query.session,
                    query.since,
                    query.until,
                    query.newest_first,
                    limit=4,
                    offset=offset,
                )
                pages += [c.id for c in read_captures(session, page)]
            assert pages == whole, query


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_a_page_of_one_state_is_read_through_the_index_of_states_and_dates(store: Store) -> None:
    _captures(store)
    with statements(store) as sent, store.read() as session:
        read_captures(session, CaptureQuery(("committed",), newest_first=True, limit=5))
        read_captures(session, CaptureQuery(newest_first=True, limit=5, offset=5))
    by_state, by_date = plans(store, sent, "captures")
    assert "ix_captures_state_started (state=?)" in by_state and "TEMP B-TREE" not in by_state
    assert "ix_captures_started_at" in by_date and "TEMP B-TREE" not in by_date, by_date
