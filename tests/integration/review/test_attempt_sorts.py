"""The Results screen's and the review list's sorts and filters (issue 21): every page in a
column's order, or of a result status, review, device or rig, agrees with the catalog sorted or
filtered by hand, on both databases; on SQLite each is read through an index in its order, never by
sorting every attempt."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from labrig.errors import UsageError
from labrig.results.attempt_list import count_attempts, list_attempts
from labrig.results.search import (
    AttemptQuery,
    AttemptSort,
    ReviewFilter,
    Source,
    StatusFilter,
    check_source,
)
from labrig.review.listing import ResultQuery, count_results, list_results
from labrig.store import Store
from labrig.store.models import (
    Attempt,
    AttemptCapture,
    Capture,
    DeviceRecord,
    RigRecord,
    RigRecording,
)
from labrig.store.search import Tally
from tests.conftest import BACKENDS, store_on
from tests.integration.review.test_result_pages import _catalog
from tests.support.plans import plans, statements

DEVICES = ("uvc:cam-a", "uvc:cam-b")


def _sources(store: Store, facts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every 2nd attempt recorded by the rig 'bench' (device cam-a), the others by cam-b alone;
    each attempt's facts (its newest result's) by attempt id, with its status, rig and device."""
    attempts: dict[str, dict[str, Any]] = {}
    for f in facts:  # oldest result first: the newest one's facts stay
        attempts[f["attempt_id"]] = dict(f)
    with store.write() as session:
        session.add(RigRecord(name="bench", created_at=facts[0]["made"], created_by="ada"))
        for device in DEVICES:
            session.add(
                DeviceRecord(
                    device_id=device,
                    kind="uvc",
                    name=device,
                    info="{}",
                    verified=True,
                    checked_at=facts[0]["made"],
                )
            )
        session.flush()
        for i, (attempt_id, f) in enumerate(sorted(attempts.items())):
            f["device"] = DEVICES[i % 2]
            f["rig"] = "bench" if i % 2 == 0 else None
            capture_id = str(uuid.uuid4())
            session.add(
                Capture(
                    id=capture_id,
                    device_id=f["device"],
                    origin="recorded",
                    state="committed",
                    mode="{}",
                    verification="{}",
                    started_at=f["attempt_made"],
                )
            )
            session.flush()
            session.add(AttemptCapture(attempt_id=attempt_id, capture_id=capture_id, position=0))
            if f["rig"]:
                session.add(
                    RigRecording(
                        id=str(uuid.uuid4()),
                        rig_name="bench",
                        session_id=_session(session, attempt_id),
                        state="saved",
                        started_at=f["attempt_made"],
                        devices="[]",
                        attempt_id=attempt_id,
                    )
                )
            f["result"] = (
                "blocked"
                if f["status"] == "blocked"
                else "degraded"
                if f["degraded"]
                else "published"
            )
    return attempts


def _session(session: Any, attempt_id: str) -> str:
    return str(session.get(Attempt, attempt_id).session_id)


KEYS = {
    AttemptSort.RECORDED: lambda f: (f["attempt_made"],),
    AttemptSort.SUBJECT: lambda f: (f["subject"], f["session_id"], f["attempt_made"]),
    AttemptSort.PROTOCOL: lambda f: (f["protocol"], f["session_id"], f["attempt_made"]),
    AttemptSort.ATTEMPT: lambda f: (1, f["attempt_made"]),
    AttemptSort.STATUS: lambda f: (f["result"], f["attempt_made"]),
}


def _by_hand(facts: dict[str, dict[str, Any]], sort: AttemptSort, descending: bool) -> list[str]:
    return sorted(facts, key=lambda a: (*KEYS[sort](facts[a]), a), reverse=descending)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    return store_on(request, request.param)


@pytest.fixture
def catalog(store: Store) -> dict[str, dict[str, Any]]:
    return _built(store)


def _built(store: Store) -> dict[str, dict[str, Any]]:
    facts = _catalog(store)
    with store.read() as session:
        sessions = dict(
            session.execute(
                Attempt.__table__.select().with_only_columns(Attempt.id, Attempt.session_id)
            ).all()
        )
    attempts = _sources(store, facts)
    for a, f in attempts.items():
        f["session_id"] = sessions[a]
    return attempts


@pytest.mark.parametrize("sort", list(AttemptSort))
@pytest.mark.parametrize("descending", [False, True])
def test_every_page_of_a_column_s_order_is_the_catalog_sorted_by_hand(
    store: Store, catalog: dict[str, dict[str, Any]], sort: AttemptSort, descending: bool
) -> None:
    expected = _by_hand(catalog, sort, descending)
    listed: list[str] = []
    for offset in range(0, len(expected), 7):
        query = AttemptQuery(limit=7, offset=offset, sort=sort, descending=descending)
        listed += [s.attempt_id for s in list_attempts(store, query)]
    assert listed == expected


FILTERS: list[tuple[dict[str, Any], Any]] = [
    *(({"status": s}, lambda f, s=s: f["result"] == s.value) for s in StatusFilter),
    ({"review": ReviewFilter.REVISED}, lambda f: f["revised"]),
    ({"review": ReviewFilter.UNREVISED}, lambda f: not f["revised"]),
    ({"review": ReviewFilter.SIGNED_OFF}, lambda f: f["signed_off"]),
    ({"source": Source(rig="bench")}, lambda f: f["rig"] == "bench"),
    ({"source": Source(device_id=DEVICES[1])}, lambda f: f["device"] == DEVICES[1]),
    (
        {"status": StatusFilter.PUBLISHED, "source": Source(device_id=DEVICES[0])},
        lambda f: f["result"] == "published" and f["device"] == DEVICES[0],
    ),
]


@pytest.mark.parametrize(("criteria", "keep"), FILTERS)
def test_a_filter_finds_what_filtering_by_hand_finds_in_any_order(
    store: Store, catalog: dict[str, dict[str, Any]], criteria: dict[str, Any], keep: Any
) -> None:
    for sort in (AttemptSort.RECORDED, AttemptSort.SUBJECT):
        expected = [a for a in _by_hand(catalog, sort, True) if keep(catalog[a])]
        query = AttemptQuery(sort=sort, **criteria)
        assert [s.attempt_id for s in list_attempts(store, query)] == expected, criteria
        assert count_attempts(store, query) == Tally(len(expected))
        # a count stops its distance past the page's start, and says there are more
        assert count_attempts(store, query, ahead=2) == Tally(
            min(2, len(expected)), len(expected) > 2
        )


def test_the_review_list_sorts_and_filters_by_device_or_rig(
    store: Store, catalog: dict[str, dict[str, Any]]
) -> None:
    results = {r.result_id: r for r in list_results(store)}
    subject = {r: (results[r].subject_code, results[r].created_at) for r in results}
    expected = sorted(results, key=lambda r: (subject[r][0], subject[r][1]), reverse=True)
    query = ResultQuery(sort=AttemptSort.SUBJECT, newest_first=True)
    assert [r.subject_code for r in list_results(store, query)] == [subject[r][0] for r in expected]
    rig = ResultQuery(source=Source(rig="bench"), limit=5)
    mine = [r for r in results.values() if catalog[r.attempt_id]["rig"] == "bench"]
    assert [r.result_id for r in list_results(store, rig)] == [r.result_id for r in mine][:5]
    assert count_results(store, rig) == Tally(len(mine))
    by_status = list_results(store, ResultQuery(sort=AttemptSort.STATUS))
    assert [(r.status, r.degraded) for r in by_status] == sorted(
        (r.status, r.degraded) for r in results.values()
    )


def test_a_device_or_rig_the_catalog_does_not_know_is_refused(
    store: Store, catalog: dict[str, dict[str, Any]]
) -> None:
    with store.read() as session:
        check_source(session, Source(rig="bench"))
        with pytest.raises(UsageError, match="no recording of the rig 'nowhere'; it knows bench"):
            check_source(session, Source(rig="nowhere"))
    with pytest.raises(UsageError, match="cannot be sorted by attempt"):
        ResultQuery(sort=AttemptSort.ATTEMPT)


def _plans(store: Store, query: AttemptQuery) -> list[str]:
    with statements(store) as sent:
        list_attempts(store, query)
        count_attempts(store, query)
    return plans(store, sent, "attempts")


@pytest.mark.parametrize(
    ("query", "index"),
    [
        (
            AttemptQuery(sort=AttemptSort.SUBJECT),
            "SCAN sessions USING COVERING INDEX ix_sessions_subject",
        ),
        (
            AttemptQuery(sort=AttemptSort.PROTOCOL, descending=False),
            "SCAN sessions USING COVERING INDEX ix_sessions_protocol",
        ),
        (
            AttemptQuery(sort=AttemptSort.ATTEMPT),
            "SCAN attempts USING COVERING INDEX ix_attempts_number",
        ),
        (
            AttemptQuery(sort=AttemptSort.STATUS),
            "SCAN attempts USING COVERING INDEX ix_attempts_result_status",
        ),
        (AttemptQuery(status=StatusFilter.BLOCKED), "ix_attempts_result_status (result_status=?)"),
        (AttemptQuery(source=Source(device_id="uvc:cam-a")), "ix_captures_device (device_id=?)"),
        (AttemptQuery(source=Source(rig="bench")), "ix_rig_recordings_rig (rig_name=?)"),
    ],
)
def test_a_sorted_or_filtered_page_reads_an_index_in_its_order(
    sqlite_store: Store, query: AttemptQuery, index: str
) -> None:
    """No page sorts every attempt: its ids come from an index in the asked order (a session's
    attempts, a few, are sorted), or from a filter's own index."""
    _built(sqlite_store)
    page, *_rest, count = _plans(sqlite_store, query)
    assert index in page, page
    # the page's rows alone are sorted (by the outer query), after the page's ids were read
    assert page.count("USE TEMP B-TREE FOR ORDER BY") <= (2 if query.source else 1), page
    for plan in (page, count):
        assert "SCAN attempts" not in plan.replace("SCAN attempts USING", ""), plan
