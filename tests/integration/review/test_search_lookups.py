"""A search found two ways (issue 21): one that finds few attempts has them looked up by their
sessions' and attempts' keys, then sorted; one that finds many is tested on each attempt or result
read in the page's order (SQLite gathered the 33,000 attempts of 's00' and sorted their results:
320 ms). Both ways find the same, on both databases; which one a page takes is decided by counting
what the search finds no further than the bound."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from labrig.results.attempt_list import count_attempts
from labrig.results.reading import (
    attempt_order,
    in_session_order,
)
from labrig.results.search import (
    AttemptQuery,
    AttemptSort,
    Sizes,
    attempt_filters,
    few_matched,
)
from labrig.review.listing import ResultQuery, _filtered, _ordered_ids
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord, Attempt
from labrig.store.search import Tally
from tests.conftest import BACKENDS, store_on
from tests.integration.review.test_result_pages import _catalog
from tests.support.plans import plan_of, plans, statements

#: words (a subject's start, a protocol's, an operator's, letter case ignored) and id starts
SEARCHES = ["s000", "GAIT", "tech1", "P-0", "0", "a", "no-such-word"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    return store_on(request, request.param)


def _found(facts: list[dict[str, Any]], text: str, of: str, keys: tuple[str, ...]) -> set[str]:
    """``of`` (an id) of the facts one of whose ``keys`` starts with ``text`` (case ignored)."""
    return {f[of] for f in facts if any(str(f[k]).lower().startswith(text.lower()) for k in keys)}


#: what an attempt is found by: its session's columns, its id; a result: its attempt's, its id
BY_ATTEMPT = ("subject", "protocol", "operator", "attempt_id")


@pytest.mark.parametrize("text", SEARCHES)
def test_both_ways_find_what_searching_by_hand_finds(store: Store, text: str) -> None:
    facts = _catalog(store)
    attempts = _found(facts, text, "attempt_id", BY_ATTEMPT)
    results = _found(facts, text, "result_id", (*BY_ATTEMPT, "result_id"))
    R = AnalysisResultRecord
    with store.read() as session:
        for few in (True, False):
            # the attempts alone, and joined to their sessions (as sorted by a session's column)
            criteria = attempt_filters(AttemptQuery(search=text), Sizes(few_matched=few))
            alone = select(Attempt.id).where(*criteria)
            joined = in_session_order(select(Attempt.id), AttemptSort.SUBJECT, True)
            for statement in (alone, joined.where(*criteria)):
                assert set(session.scalars(statement)) == attempts, few
            if not few:  # many: read session by session in a session's order, each one tested
                in_order = in_session_order(select(Attempt.id), AttemptSort.SUBJECT, False)
                each = attempt_filters(
                    AttemptQuery(search=text), Sizes(few_matched=False), session_joined=True
                )
                assert set(session.scalars(in_order.where(*each))) == attempts
            # the results alone, joined to their attempts and sessions, and in a session's order
            query = ResultQuery(search=text, sort=AttemptSort.SUBJECT)
            for statement in (
                _filtered(select(R.id), query, joined=False, many=not few),
                _filtered(select(R.id), query, many=not few),
                _ordered_ids(query, many=not few),
            ):
                assert set(session.scalars(statement)) == results, few


@pytest.mark.parametrize("text", SEARCHES)
def test_the_count_of_a_search_agrees_with_searching_by_hand(store: Store, text: str) -> None:
    n = len(_found(_catalog(store), text, "attempt_id", BY_ATTEMPT))
    assert count_attempts(store, AttemptQuery(search=text)) == Tally(n)
    assert count_attempts(store, AttemptQuery(search=text), ahead=1) == Tally(min(n, 1), n > 1)


def test_a_word_s_attempts_are_counted_from_its_sessions_on_sqlite(sqlite_store: Store) -> None:
    """Session by session through the sessions' index, each session's attempts by theirs: the
    count stops at its bound whatever share of the catalog the word finds (SQLite gathered the
    72,000 attempts of 's00' first, or tested every attempt for a word of a few thousand)."""
    _catalog(sqlite_store)
    with statements(sqlite_store) as sent:
        count_attempts(sqlite_store, AttemptQuery(search="tech1"))
    [plan] = plans(sqlite_store, sent, "sessions")
    assert plan.startswith("CO-ROUTINE") and "SCAN sessions" in plan, plan
    assert "SEARCH attempts USING INDEX ix_attempts_session_id (session_id=?)" in plan, plan
    assert "SCAN attempts" not in plan and "LIST SUBQUERY" not in plan, plan


def test_a_search_finds_few_up_to_the_bound_counted_no_further(store: Store) -> None:
    facts = _catalog(store)
    s0 = len({f["attempt_id"] for f in facts if f["subject"].lower().startswith("s0")})
    with store.read() as session:
        assert few_matched(session, "s0", at_most=s0)
        assert not few_matched(session, "s0", at_most=s0 - 1)
        assert few_matched(session, None) and few_matched(session, "  ")  # no search


def test_a_search_that_finds_many_reads_the_results_in_the_page_s_order_on_sqlite(
    sqlite_store: Store,
) -> None:
    """Not gathered and sorted: SQLite reads the results newest first from their index and
    tests each one's session."""
    _catalog(sqlite_store)
    R = AnalysisResultRecord
    page = (
        _filtered(select(R.id), ResultQuery(search="s0"), joined=False, many=True)
        .order_by(R.created_at.desc(), R.id.desc())
        .limit(10)
    )
    plan = plan_of(sqlite_store, page)
    assert plan.startswith("SCAN analysis_results USING INDEX ix_analysis_results_created_at")
    assert "TEMP B-TREE" not in plan, plan


def test_a_search_that_finds_many_tests_each_session_as_read_in_its_order_on_sqlite(
    sqlite_store: Store,
) -> None:
    """Sorted by subject, the attempts are read with their session: the session at hand is
    tested, not looked up again for each attempt (a page of 's00' past offset 5,000: 64 ms with
    the lookups, 26 without)."""
    _catalog(sqlite_store)
    query = AttemptQuery(search="s0", sort=AttemptSort.SUBJECT)
    each = attempt_filters(query, Sizes(few_matched=False), session_joined=True)
    page = (
        in_session_order(select(Attempt.id), query.sort, False)
        .where(*each)
        .order_by(*attempt_order(query.sort, query.descending))
        .limit(10)
    )
    plan = plan_of(sqlite_store, page)
    assert plan.startswith("SCAN sessions USING INDEX ix_sessions_subject"), plan
    assert "SUBQUERY" not in plan, plan
