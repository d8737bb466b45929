"""The queue a page at a time (the Queue screen, ``labrig jobs``): every filter, page and count
agrees with the whole queue filtered by hand, on both databases; the live queue's states and their
counts are read from the partial index of unsettled jobs, never from the history (plans pinned)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from labrig.domain.jobs import UNSETTLED, JobState
from labrig.errors import UsageError
from labrig.jobs import JobView
from labrig.jobs.listing import JobQuery, count_jobs, read_jobs, unsettled_counts
from labrig.store.search import Tally
from tests.integration.queue.conftest import Rig
from tests.support.plans import plans, statements

S = JobState
#: the states the catalog's jobs are put in, in turn: mostly the history, as in a lab's queue
STATES = (S.SUCCEEDED, S.SUCCEEDED_DEGRADED, S.SUCCEEDED, S.READY, S.PERMANENT_FAILURE, S.SUCCEEDED,
          S.BLOCKED_BY_QUALITY, S.CANCELLED, S.SUCCEEDED, S.RUNNING, S.SUPERSEDED)  # fmt: skip


def _queue(rig: Rig, n: int = 44) -> list[JobView]:
    """``n`` jobs of two stages, a second apart, in :data:`STATES` in turn, every other one of an
    attempt (four attempts). Returns them oldest first, as stored."""
    attempts = [str(uuid.uuid4()) for _ in range(4)]
    for i in range(n):
        stage = "t.echo" if i % 3 else "t.degraded"
        attempt = attempts[i % 4] if i % 2 == 0 else None
        view = rig.queue.enqueue(stage, [f"{i:064x}"], attempt_id=attempt)
        with rig.store.write() as session:
            session.execute(
                text("UPDATE jobs SET state = :s WHERE id = :id"),
                {"s": STATES[i % len(STATES)].value, "id": view.id},
            )
        rig.time.advance(1.0)
    return rig.queue.jobs()


def _by_hand(jobs: list[JobView], query: JobQuery) -> list[JobView]:
    key = (query.search or "").strip().lower()
    found = [
        j
        for j in jobs
        if (not query.states or j.state in query.states)
        and (query.stage is None or j.stage_id == query.stage)
        and (not key or j.id.startswith(key) or (j.attempt_id or "").startswith(key))
    ]
    return found[::-1] if query.newest_first else found


def test_every_filter_page_and_count_agrees_with_the_queue_filtered_by_hand(rig: Rig) -> None:
    jobs = _queue(rig)
    some_job, some_attempt = jobs[7].id, next(j.attempt_id for j in jobs if j.attempt_id)
    assert some_attempt is not None
    queries = [
        JobQuery(),
        JobQuery(states=(S.READY,)),
        JobQuery(states=(S.PERMANENT_FAILURE, S.BLOCKED_BY_QUALITY), newest_first=True),
        JobQuery(states=(S.SUCCEEDED,), stage="t.echo"),
        JobQuery(states=(S.SUCCEEDED, S.READY)),  # settled and not: the index of dates
        JobQuery(stage="t.degraded", newest_first=True),
        JobQuery(search=some_job[:6]),
        JobQuery(search=some_job.upper()),
        JobQuery(search=f"  {some_attempt[:9]} "),
        JobQuery(search="S0001"),  # not an id: nothing
        JobQuery(search="%"),
    ]
    with rig.store.read() as session:
        for query in queries:
            whole = _by_hand(jobs, query)
            assert read_jobs(session, query) == whole, query
            assert count_jobs(session, query) == Tally(len(whole)), query
            pages = []
            for offset in range(0, len(whole) + 5, 5):
                page = JobQuery(
                    query.states,
                    query.stage,
                    query.search,
                    query.newest_first,
                    limit=5,
                    offset=offset,
                )
                pages += read_jobs(session, page)
            assert pages == whole, query
        assert read_jobs(session, JobQuery(search="S0001")) == []
        assert read_jobs(session, JobQuery(search=some_job)) == [
            next(j for j in jobs if j.id == some_job)
        ]
        counts = unsettled_counts(session)
    assert counts == {s: sum(j.state is s for j in jobs) for s in UNSETTLED}
    assert counts[S.READY] == 4 and counts[S.RUNNING] == 4
    assert rig.queue.counts() == counts


def test_a_count_stops_its_distance_past_the_pages_start_and_says_there_are_more(
    rig: Rig,
) -> None:
    jobs = _queue(rig)  # 44
    succeeded = sum(j.state is S.SUCCEEDED for j in jobs)  # 16
    with rig.store.read() as session:
        assert count_jobs(session, JobQuery(limit=5), ahead=10) == Tally(10, more=True)
        assert count_jobs(session, JobQuery(limit=5, offset=30), ahead=10) == Tally(40, more=True)
        assert count_jobs(session, JobQuery(limit=5, offset=34), ahead=10) == Tally(44)
        assert count_jobs(session, JobQuery(limit=5, offset=40), ahead=10) == Tally(44)
        assert count_jobs(session, JobQuery(states=(S.SUCCEEDED,)), ahead=16) == Tally(succeeded)
        assert count_jobs(session, JobQuery(states=(S.SUCCEEDED,)), ahead=15) == Tally(15, True)
    assert str(Tally(10_000, more=True)) == "more than 10,000" and str(Tally(1234)) == "1,234"
    # the database itself stops: it is asked for the first 11 rows, never for every job
    with statements(rig.store) as sent, rig.store.read() as session:
        count_jobs(session, JobQuery(limit=5), ahead=10)
    [(sql, parameters)] = sent
    values = parameters.values() if isinstance(parameters, dict) else parameters
    assert "LIMIT" in sql and 11 in values, (sql, parameters)


@pytest.mark.parametrize("limit, offset", [(0, 0), (-1, 0), (5, -1)])
def test_a_page_that_cannot_be_is_refused_with_the_usage_code(limit: int, offset: int) -> None:
    with pytest.raises(UsageError) as caught:
        JobQuery(limit=limit, offset=offset)
    assert caught.value.code == "LABRIG_USAGE"


def _plans(rig: Rig, query: JobQuery) -> list[str]:
    """SQLite's plan of the page's and the count's statements, and of the queue's counts."""
    with statements(rig.store) as sent, rig.store.read() as session:
        read_jobs(session, query)
        count_jobs(session, query)
        unsettled_counts(session)
    return plans(rig.store, sent, "jobs")


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_the_live_queues_pages_and_counts_read_only_the_unsettled_jobs(rig: Rig) -> None:
    _queue(rig)
    page, count, counts = _plans(rig, JobQuery(states=(S.PERMANENT_FAILURE,), limit=5))
    assert "ix_jobs_unsettled" in page and "ix_jobs_unsettled" in count, (page, count)
    assert "ix_jobs_unsettled" in counts, counts
    for plan in (page, count, counts):
        assert "SCAN jobs" not in plan.replace("SCAN jobs USING", ""), plan
    # the newest page of the history: the index of dates, in its order (nothing sorted)
    newest, _count, _counts = _plans(rig, JobQuery(newest_first=True, limit=5, offset=5))
    assert "ix_jobs_created_at" in newest and "TEMP B-TREE" not in newest, newest
    # a settled state: the partial index of settled jobs; a stage: the index of stages
    for query, index in (
        (
            JobQuery(states=(S.SUCCEEDED, S.CANCELLED), newest_first=True, limit=5),
            "ix_jobs_settled",
        ),
        (JobQuery(stage="t.degraded", newest_first=True, limit=5), "ix_jobs_stage"),
    ):
        page, count, _counts = _plans(rig, query)
        assert index in page and index in count, (page, count)
        if index == "ix_jobs_stage":  # in its order: nothing sorted
            assert "TEMP B-TREE" not in page, page
        for plan in (page, count):
            assert "SCAN jobs" not in plan.replace("SCAN jobs USING", ""), plan
    # an id's start: a range of the primary key's index
    by_id, _count, _counts = _plans(rig, JobQuery(search="0a1b", limit=5))
    assert "sqlite_autoindex_jobs_1 (id>? AND id<?)" in by_id, by_id
