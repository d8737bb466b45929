"""The Results screen's pages of attempts (``list_attempts``, ``count_attempts``): a period and a
search agree with the attempts filtered by hand, and a page of the newest attempts, or of a period,
is read through the index of the attempts' dates, not by sorting every attempt."""

from __future__ import annotations

from datetime import timedelta

from labrig.results.attempt_list import count_attempts, list_attempts
from labrig.results.search import AttemptQuery
from labrig.store import Store, utcnow
from labrig.store.search import Tally
from tests.integration.review.test_result_pages import _catalog
from tests.support.plans import plans, statements


def test_a_period_and_a_search_agree_with_the_attempts_filtered_by_hand(store: Store) -> None:
    facts = _catalog(store)
    made = {f["attempt_id"]: f for f in facts}
    newest_first = sorted(made, key=lambda a: (made[a]["attempt_made"], a), reverse=True)
    since = utcnow() - timedelta(days=300)
    recent = [a for a in newest_first if made[a]["attempt_made"] >= since]
    assert 0 < len(recent) < len(newest_first)
    query = AttemptQuery(since=since, limit=5)
    assert [s.attempt_id for s in list_attempts(store, query)] == recent[:5]
    assert count_attempts(store, query) == Tally(len(recent))
    subject = made[recent[0]]["subject"]
    both = AttemptQuery(search=subject.lower(), since=since)
    expected = [a for a in recent if made[a]["subject"] == subject]
    assert [s.attempt_id for s in list_attempts(store, both)] == expected
    assert count_attempts(store, both) == Tally(len(expected))


def _plans(store: Store, query: AttemptQuery) -> list[str]:
    with statements(store) as sent:
        list_attempts(store, query)
        count_attempts(store, query)
    return plans(store, sent, "attempts")


def test_a_page_of_a_period_reads_the_index_of_dates(sqlite_store: Store) -> None:
    """The page's ids come from the index of dates (the newest, or the period's range), then only
    their rows are read and sorted; the count reads the same index."""
    _catalog(sqlite_store)
    page, *_rest, count = _plans(sqlite_store, AttemptQuery(limit=50))
    assert "SCAN attempts USING INDEX ix_attempts_created_at" in page, page
    since = utcnow() - timedelta(days=300)
    page, *_rest, count = _plans(sqlite_store, AttemptQuery(since=since))
    in_period = "SEARCH attempts USING INDEX ix_attempts_created_at (created_at>?)"
    assert in_period in page, page
    assert "ix_attempts_created_at (created_at>?)" in count, count
    for plan in (page, count):  # no step reads every attempt
        assert "SCAN attempts" not in plan.replace("SCAN attempts USING", ""), plan
