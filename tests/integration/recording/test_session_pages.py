"""``labrig sessions`` and the Results screen's sessions a page at a time: each search, period,
page and count agrees with the sessions filtered by hand, each with its attempts counted, on both
databases; a page is read through the sessions' index of dates and each of its sessions' attempts
through theirs, never by counting every session's attempts and sorting (plan pinned on SQLite)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from labrig.capture.session_listing import SessionQuery, count_sessions, read_sessions
from labrig.store import Store, utcnow
from labrig.store.models import Attempt, CaptureSession
from tests.conftest import BACKENDS, store_on
from tests.support.plans import plans, statements

SUBJECTS = ("S0001", "S0002", "s0100", "P0007")
PROTOCOLS = ("gait", "reach-left", "Gait_fast")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    return store_on(request, request.param)


def _sessions(store: Store, n: int = 24) -> list[dict[str, Any]]:
    start, made = utcnow() - timedelta(days=n), []
    with store.write() as session:
        for i in range(n):
            fact = {
                "id": str(uuid.uuid4()),
                "subject": SUBJECTS[i % len(SUBJECTS)],
                "protocol": PROTOCOLS[i % len(PROTOCOLS)],
                "operator": "ana" if i % 2 else "Bo",
                "began": start + timedelta(days=i),
                "attempts": i % 4,
            }
            session.add(
                CaptureSession(
                    id=fact["id"],
                    subject_code=fact["subject"],
                    protocol=fact["protocol"],
                    operator=fact["operator"],
                    created_at=fact["began"],
                )
            )
            session.flush()
            for number in range(1, fact["attempts"] + 1):
                session.add(
                    Attempt(
                        id=str(uuid.uuid4()),
                        session_id=fact["id"],
                        number=number,
                        created_at=fact["began"] + timedelta(minutes=number),
                    )
                )
            made.append(fact)
    return made


def _starts(value: str, text: str) -> bool:
    return value.lower().startswith(text.lower())


def test_every_search_period_page_and_count_agrees_with_the_sessions_filtered_by_hand(
    store: Store,
) -> None:
    made = _sessions(store)
    middle = made[12]["began"]
    cases = [
        (SessionQuery(), lambda f: True),
        (SessionQuery(newest_first=True), lambda f: True),
        (SessionQuery("s0"), lambda f: _starts(f["subject"], "s0")),
        (SessionQuery("GAIT", newest_first=True), lambda f: _starts(f["protocol"], "gait")),
        (SessionQuery("gait_"), lambda f: _starts(f["protocol"], "gait_")),  # _ literally
        (SessionQuery("bo"), lambda f: f["operator"] == "Bo"),
        (SessionQuery(since=middle), lambda f: f["began"] >= middle),
        (
            SessionQuery("s00", until=middle, newest_first=True),
            lambda f: _starts(f["subject"], "s00") and f["began"] < middle,
        ),
        (SessionQuery("nobody"), lambda f: False),
    ]
    with store.read() as session:
        for query, keep in cases:
            whole = [f for f in made if keep(f)]
            whole = whole[::-1] if query.newest_first else whole
            rows = read_sessions(session, query)
            assert [r.id for r in rows] == [f["id"] for f in whole], query
            assert [r.attempts for r in rows] == [f["attempts"] for f in whole], query
            assert count_sessions(session, query) == len(whole), query
            pages: list[str] = []
            for offset in range(0, len(whole) + 5, 5):
                pages += [
                    r.id for r in read_sessions(session, replace(query, limit=5, offset=offset))
                ]
            assert pages == [f["id"] for f in whole], query


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_a_page_reads_the_sessions_by_date_and_counts_only_its_own_attempts(store: Store) -> None:
    _sessions(store)
    with statements(store) as sent, store.read() as session:
        read_sessions(session, SessionQuery(newest_first=True, limit=5, offset=5))
    [page] = plans(store, sent, "sessions")
    assert "ix_sessions_created_at" in page and "TEMP B-TREE" not in page, page
    assert "ix_attempts_session_id (session_id=?)" in page, page
