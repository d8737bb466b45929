"""The Results screen's older pages read from the previous page's last row (issue 21): each page
after a position continues the order exactly where the one before ended, in every sort, with a
filter or a search, through rows that tie on their date, on both databases; on SQLite the page is
read from the position through the order's index, not by walking the rows before it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from itertools import pairwise
from typing import Any

import pytest
from sqlalchemy import update

from labrig.errors import UsageError
from labrig.results.attempt_list import AttemptSummary, list_attempts, page_of_attempts
from labrig.results.search import AttemptQuery, AttemptSort, Sizes, Source
from labrig.store import Store
from labrig.store.models import Attempt
from tests.conftest import BACKENDS, store_on
from tests.integration.review.test_attempt_sorts import DEVICES, _built, _by_hand
from tests.support.plans import plans, statements


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    return store_on(request, request.param)


def _tied(store: Store) -> dict[str, dict[str, Any]]:
    """The sorts' catalog, with every 3rd attempt made at the same moment as the one before it (in
    date order): a page may end between two rows of one date."""
    catalog = _built(store)
    by_date = sorted(catalog, key=lambda a: (catalog[a]["attempt_made"], a))
    with store.write() as session:
        for before, attempt_id in list(pairwise(by_date))[::3]:
            when = catalog[before]["attempt_made"]
            catalog[attempt_id]["attempt_made"] = when
            session.execute(update(Attempt).where(Attempt.id == attempt_id).values(created_at=when))
    return catalog


def _walked(store: Store, query: AttemptQuery, size: int) -> list[str]:
    """Every attempt ``query`` finds, page after page, each page read after the last row of the one
    before (as the screen's Older button reads them)."""
    listed: list[AttemptSummary] = []
    while True:
        after = listed[-1].position if listed else None
        page = list_attempts(store, replace(query, limit=size, after=after))
        listed += page
        if len(page) < size:
            return [s.attempt_id for s in listed]


@pytest.mark.parametrize("sort", list(AttemptSort))
@pytest.mark.parametrize("descending", [False, True])
def test_pages_read_after_a_position_are_the_catalog_sorted_by_hand(
    store: Store, sort: AttemptSort, descending: bool
) -> None:
    catalog = _tied(store)
    assert len({f["attempt_made"] for f in catalog.values()}) < len(catalog)  # some dates tie
    expected = _by_hand(catalog, sort, descending)
    assert _walked(store, AttemptQuery(sort=sort, descending=descending), 5) == expected


@pytest.mark.parametrize(
    ("criteria", "keep"),
    [
        ({"source": Source(device_id=DEVICES[0])}, lambda f: f["device"] == DEVICES[0]),
        ({"source": Source(rig="bench")}, lambda f: f["rig"] == "bench"),
        ({"search": "s00"}, lambda f: f["subject"].lower().startswith("s00")),
    ],
)
@pytest.mark.parametrize("sort", [AttemptSort.RECORDED, AttemptSort.SUBJECT])
def test_a_filter_s_pages_read_after_a_position_are_what_filtering_by_hand_finds(
    store: Store, criteria: dict[str, Any], keep: Any, sort: AttemptSort
) -> None:
    catalog = _tied(store)
    expected = [a for a in _by_hand(catalog, sort, True) if keep(catalog[a])]
    assert 3 < len(expected) < len(catalog)
    assert _walked(store, AttemptQuery(sort=sort, **criteria), 3) == expected


def test_a_position_is_the_row_s_place_in_its_order(store: Store) -> None:
    catalog = _built(store)
    newest = list_attempts(store, AttemptQuery(limit=1, sort=AttemptSort.SUBJECT))[0]
    facts = catalog[newest.attempt_id]
    assert newest.position == (
        "subject",
        True,  # descending
        facts["subject"],
        facts["session_id"],
        newest.created_at,
        newest.attempt_id,
    )


@pytest.mark.parametrize(
    ("sort", "descending"),
    [
        (AttemptSort.RECORDED, True),  # fewer keys
        (AttemptSort.PROTOCOL, True),  # as many keys, another order
        (AttemptSort.SUBJECT, False),  # the same order, the other way
    ],
)
def test_a_position_of_another_order_or_direction_is_refused(
    store: Store, sort: AttemptSort, descending: bool
) -> None:
    """A subject's and a protocol's positions have as many values, of the same types: the order
    a position names is checked, not only its length."""
    _built(store)
    first = list_attempts(store, AttemptQuery(limit=1, sort=AttemptSort.SUBJECT))[0]
    assert first.position is not None
    query = AttemptQuery(sort=sort, descending=descending, after=first.position)
    with pytest.raises(UsageError, match=f"another order than by {sort.value}") as raised:
        list_attempts(store, query)
    assert raised.value.code == "LABRIG_USAGE"


@pytest.mark.parametrize(
    ("sort", "index"),
    [
        (AttemptSort.RECORDED, "ix_attempts_created_at (created_at<"),
        (AttemptSort.SUBJECT, "ix_sessions_subject ((subject_code,id)<("),
        (AttemptSort.STATUS, "ix_attempts_result_status (result_status<"),
    ],
)
def test_a_camera_s_page_after_a_position_starts_there_in_the_order_s_index(
    sqlite_store: Store, sort: AttemptSort, index: str
) -> None:
    """A camera that recorded many attempts has them tested one by one as the order's index is
    read: from the position on, so that the rows before it are not read again (nor skipped by an
    offset)."""
    _built(sqlite_store)
    camera = AttemptQuery(limit=3, sort=sort, source=Source(device_id=DEVICES[0]))
    last = list_attempts(sqlite_store, camera)[-1]
    many = Sizes(few_recorded=False)
    after = page_of_attempts(replace(camera, after=last.position), many)
    with statements(sqlite_store) as sent, sqlite_store.read() as session:
        found = session.scalars(after).all()
    assert found == _walked(sqlite_store, camera, 3)[3:6]
    (page,) = plans(sqlite_store, sent)
    assert index in page, page
    assert sent[0][1][-1] == 0  # SQLite's OFFSET, always written


def test_a_position_read_back_keeps_its_moment(store: Store) -> None:
    """A position's date goes back to the database as the column keeps it (SQLite keeps no zone):
    the page after the newest attempt starts at the second newest, not at it or past it."""
    catalog = _built(store)
    newest_first = _by_hand(catalog, AttemptSort.RECORDED, True)
    first = list_attempts(store, AttemptQuery(limit=1))[0]
    assert first.position is not None and first.position[2].utcoffset() == timedelta(0)
    second = list_attempts(store, AttemptQuery(limit=1, after=first.position))
    assert [s.attempt_id for s in second] == newest_first[1:2]
