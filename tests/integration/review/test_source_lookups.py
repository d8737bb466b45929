"""A device's or rig's attempts, and the revised ones, found two ways (issue 21): few are read from
the filter's own rows, each attempt looked up by its key; many are tested on each attempt read in
the page's order. Both ways find the same attempts, on both databases; which one a page takes is
decided by counting the filter's rows no further than the bound. A page's calibrations are read at
once, not one read for each; its jobs by one statement whatever their number."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import insert, select

from labrig.results.attempt_list import count_attempts, list_attempts
from labrig.results.flags import CalibrationFlags
from labrig.results.reading import (
    attempt_order,
    from_recordings,
)
from labrig.results.search import (
    FEW,
    AttemptQuery,
    ReviewFilter,
    Sizes,
    Source,
    StatusFilter,
    attempt_filters,
    sizes_of,
)
from labrig.store import Store, utcnow
from labrig.store.models import (
    Attempt,
    AttemptCapture,
    Capture,
    CaptureSession,
    ResultRevision,
)
from labrig.store.search import Tally, among, bounded_count, bounded_count_once
from tests.conftest import BACKENDS, store_on
from tests.integration.review.test_attempt_sorts import DEVICES, _built
from tests.support.plans import plan_of, statements

SOURCES = [Source(rig="bench"), Source(device_id=DEVICES[0]), Source(device_id=DEVICES[1])]


def _recorded(facts: dict[str, Any], source: Source) -> bool:
    return bool(facts["rig"] == source.rig if source.rig else facts["device"] == source.device_id)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    return store_on(request, request.param)


FILTERS = [*(AttemptQuery(source=s) for s in SOURCES), AttemptQuery(review=ReviewFilter.REVISED)]


def _keep(query: AttemptQuery, facts: dict[str, Any]) -> bool:
    if query.review is ReviewFilter.REVISED:
        return bool(facts["revised"])
    assert query.source is not None
    return _recorded(facts, query.source)


@pytest.mark.parametrize("query", FILTERS)
def test_both_ways_find_the_attempts_the_filter_keeps(store: Store, query: AttemptQuery) -> None:
    catalog = _built(store)
    expected = {a for a, f in catalog.items() if _keep(query, f)}
    assert expected and expected != set(catalog)
    with store.read() as session:
        for few in (True, False):
            sizes = Sizes(few_recorded=few, few_revised=few)
            found = session.scalars(select(Attempt.id).where(*attempt_filters(query, sizes)))
            assert set(found) == expected, few


@pytest.mark.parametrize("source", SOURCES)
def test_read_from_its_own_rows_a_source_finds_each_of_its_attempts_once(
    store: Store, source: Source
) -> None:
    """As the count of a camera's many attempts reads them (on SQLite), with another filter; an
    attempt with two captures of the device is found once."""
    catalog = _built(store)
    expected = {a for a, f in catalog.items() if _recorded(f, source)}
    _captured_twice(store, min(expected), source.device_id or catalog[min(expected)]["device"])
    published = {a for a in expected if catalog[a]["result"] == "published"}
    assert published and published != expected
    status = AttemptQuery(status=StatusFilter.PUBLISHED)
    with store.read() as session:
        found = session.scalars(from_recordings(select(Attempt.id), source)).all()
        assert sorted(found) == sorted(expected)  # each once
        read = from_recordings(select(Attempt.id), source).where(*attempt_filters(status))
        assert set(session.scalars(read)) == published
        assert bounded_count(session, read, len(published) - 1) == Tally(len(published) - 1, True)


def _captured_twice(store: Store, attempt_id: str, device_id: str) -> None:
    """A second capture of ``device_id`` for the attempt."""
    with store.write() as session:
        capture_id = str(uuid.uuid4())
        session.add(
            Capture(
                id=capture_id,
                device_id=device_id,
                origin="recorded",
                state="committed",
                mode="{}",
                verification="{}",
                started_at=utcnow(),
            )
        )
        session.flush()
        session.add(AttemptCapture(attempt_id=attempt_id, capture_id=capture_id, position=1))


def test_a_camera_s_count_takes_each_attempt_once_at_every_bound(store: Store) -> None:
    """Counted from the camera's captures without DISTINCT, an attempt with two captures of it is
    counted once: whether it is among the first rows (read again each once) or not."""
    catalog = _built(store)
    source = Source(device_id=DEVICES[0])
    expected = sorted(a for a, f in catalog.items() if _recorded(f, source))
    _captured_twice(store, expected[0], DEVICES[0])
    links = from_recordings(select(Attempt.id), source, once=False)
    with store.read() as session:
        for order in (Attempt.id.asc(), Attempt.id.desc()):  # the twice-captured one first, last
            assert len(session.scalars(links.order_by(order)).all()) == len(expected) + 1
            for at_most in range(len(expected) + 2):
                tally = bounded_count_once(session, links.order_by(order), at_most)
                assert tally == Tally(min(len(expected), at_most), len(expected) > at_most)


def test_a_camera_s_attempts_are_counted_from_its_captures_on_sqlite(sqlite_store: Store) -> None:
    """The device's captures through their index, each one's attempt by key: the count stops at
    its bound (a camera's 5,001 of 49,070: 9 ms, where testing each attempt read took 55)."""
    _built(sqlite_store)
    read = from_recordings(select(Attempt.id), Source(device_id=DEVICES[0])).limit(5)
    plan = plan_of(sqlite_store, read)
    assert plan.startswith("SEARCH captures USING COVERING INDEX ix_captures_device"), plan
    assert "ix_attempt_captures_capture (capture_id=?)" in plan, plan
    assert "SCAN attempts" not in plan, plan


def test_a_filter_finds_few_up_to_the_bound_counted_no_further(store: Store) -> None:
    catalog = _built(store)
    bench = sum(1 for f in catalog.values() if f["rig"] == "bench")
    cam_b = sum(1 for f in catalog.values() if f["device"] == DEVICES[1])
    with store.read() as session:
        revisions = len(session.scalars(select(ResultRevision.id)).all())
        for query, n in (
            (AttemptQuery(source=Source(rig="bench")), bench),
            (AttemptQuery(source=Source(device_id=DEVICES[1])), cam_b),
        ):
            assert sizes_of(session, query, at_most=n).few_recorded
            assert not sizes_of(session, query, at_most=n - 1).few_recorded
        revised = AttemptQuery(review=ReviewFilter.REVISED)
        assert sizes_of(session, revised, at_most=revisions).few_revised
        assert not sizes_of(session, revised, at_most=revisions - 1).few_revised
        with statements(store) as sent:  # a count gathers them, so they are not counted first
            assert sizes_of(session, revised, at_most=revisions - 1, counting=True).few_revised
        assert sent == []
        # no source, no review filter: nothing is counted
        with statements(store) as sent:
            assert sizes_of(session, AttemptQuery()) == Sizes()
        assert sent == []


def test_a_few_recorded_attempts_are_each_looked_up_by_key_on_postgresql(pg_store: Store) -> None:
    """The page's ids from the device's captures, each capture's attempts by the captures' index,
    each attempt by its key: given as arrays, never joined by a hash of a whole table."""
    _built(pg_store)
    with statements(pg_store) as sent:
        list_attempts(pg_store, AttemptQuery(source=Source(device_id=DEVICES[0])))
    [page] = [(sql, params) for sql, params in sent if "= ANY(ARRAY(" in sql]
    with pg_store.engine.connect() as conn:
        # with scans refused, the plan shows what the query's own conditions can be read through
        conn.exec_driver_sql("SET enable_seqscan = off")
        plan = "\n".join(row[0] for row in conn.exec_driver_sql("EXPLAIN " + page[0], page[1]))
    assert "ix_attempt_captures_capture" in plan, plan
    assert "Index Cond: ((capture_id)::text = ANY (" in plan, plan
    assert "Index Cond: ((id)::text = ANY (" in plan, plan  # the attempts, by their key
    assert "Hash Join" not in plan and "Hash Semi Join" not in plan, plan


def test_a_page_s_calibrations_are_read_at_once_whatever_their_number(store: Store) -> None:
    flags = CalibrationFlags(store)
    used = [(f"single-{n}", None) for n in range(12)] + [(None, f"rig-{n}") for n in range(9)]
    with statements(store) as sent:
        flags.prefetch(used)
        # worked out once: asked again, nothing is read
        assert all(flags.of_ids(*pair) == () for pair in used)  # none of them is stored
    reads = [sql for sql, _ in sent if "calibrations" in sql]
    assert len(reads) == 2, reads  # the calibrations, the rig calibrations: each by their keys
    with statements(store) as sent:
        assert flags.of_ids("single-99", None) == ()
    assert len(sent) == 1  # one not prefetched is read on its own


def test_a_page_s_jobs_are_read_by_one_statement_whatever_the_page_s_size(store: Store) -> None:
    """The jobs and results of a page's attempts (``among``): the rows ``IN`` finds; on PostgreSQL
    one statement text for any number of keys, the keys one array, so the driver parses it once."""
    catalog = _built(store)
    ids = sorted(catalog)
    texts = set()
    for keys in (ids[:1], ids[:5], ids):
        with store.read() as session, statements(store) as sent:
            found = session.scalars(select(Attempt.id).where(among(Attempt.id, keys)))
            assert sorted(found) == sorted(keys)
        texts |= {sql for sql, _ in sent}
    assert len(texts) == (1 if store.dialect == "postgresql" else 3), texts
    with pytest.raises(ValueError, match="at least one key"):
        among(Attempt.id, [])


@pytest.mark.parametrize("query", FILTERS)
def test_many_are_tested_on_each_attempt_read_in_the_page_s_order_on_sqlite(
    sqlite_store: Store, query: AttemptQuery
) -> None:
    """SQLite, which keeps no statistics, reads the attempts newest first from their index and
    looks each one's rig, captures or revisions up: it neither gathers what the filter finds to
    sort it, nor reads a device's captures for each attempt."""
    _built(sqlite_store)
    page = (
        select(Attempt.id)
        .where(*attempt_filters(query, Sizes(few_recorded=False, few_revised=False)))
        .order_by(*attempt_order(query.sort, query.descending))
        .limit(10)
    )
    plan = plan_of(sqlite_store, page)
    assert "SCAN attempts USING INDEX ix_attempts_created_at" in plan, plan
    assert "TEMP B-TREE FOR ORDER BY" not in plan, plan
    assert "ix_captures_device" not in plan, plan


def test_a_camera_of_many_attempts_is_counted_from_its_captures_each_attempt_once(
    store: Store,
) -> None:
    """Past the bound of a few (``FEW``), a camera's attempts are counted from its captures without
    DISTINCT, on both databases: exactly, with an attempt captured twice, and with a filter of the
    attempts."""
    many = FEW + 10
    made = utcnow()
    attempts = [str(uuid.uuid4()) for _ in range(many)]
    captures = [str(uuid.uuid4()) for _ in range(many + 1)]
    with store.write() as session:
        session.execute(
            insert(CaptureSession),
            [
                {
                    "id": "s",
                    "subject_code": "S1",
                    "protocol": "p",
                    "operator": "o",
                    "created_at": made,
                }
            ],
        )
        session.execute(
            insert(Attempt),
            [
                {"id": a, "session_id": "s", "number": i + 1, "created_at": made}
                for i, a in enumerate(attempts)
            ],
        )
        session.execute(
            insert(Capture),
            [
                {
                    "id": c,
                    "device_id": "uvc:busy",
                    "origin": "recorded",
                    "state": "committed",
                    "mode": "{}",
                    "verification": "{}",
                    "started_at": made,
                }
                for c in captures
            ],
        )
        links = [*zip(attempts, captures, strict=False), (attempts[0], captures[-1])]
        session.execute(
            insert(AttemptCapture),
            [
                {"attempt_id": a, "capture_id": c, "position": int(c == captures[-1])}
                for a, c in links
            ],
        )
    camera = AttemptQuery(source=Source(device_id="uvc:busy"))
    with store.read() as session:
        assert not sizes_of(session, camera, counting=True).few_recorded  # counted as many
    assert count_attempts(store, camera, ahead=many + 5) == Tally(many)
    assert count_attempts(store, camera, ahead=many - 1) == Tally(many - 1, True)
    pending = replace(camera, status=StatusFilter.PENDING)
    assert count_attempts(store, pending, ahead=many + 5) == Tally(many)
    published = replace(camera, status=StatusFilter.PUBLISHED)
    assert count_attempts(store, published, ahead=many + 5) == Tally(0)
