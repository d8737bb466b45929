"""The list, filter and search queries ``bench_catalog.py`` times, each on the big catalog and on
its small peer: the review list's pages, filters and searches (``labrig.review.listing``), the
Results screen's pages of attempts (``labrig.results.views``), the Queue screen's and ``labrig
jobs``' pages of jobs and the queue's counts (``labrig.jobs.listing``), and ``labrig captures``'
pages (``labrig.capture.listing``): the app's own functions, through ``open_store`` and its read
sessions, as the screens and the commands call them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

PAGE = 50
#: a device of make_catalog's treadmill rig (3% of the attempts)
DEVICE = "ip:http://10.20.0.31/mjpg/video.mjpg"
#: the Results and Queue screens' page
SCREEN_PAGE = 200
#: what the Results screen reads of a page: one row more, whether an older page has any
READ = SCREEN_PAGE + 1
TARGETS = {"page": 50.0, "search": 50.0, "first_paint": 1.0, "review_list": 0.5, "dispatch": 5.0}
QUERY_BUDGET_S = 20.0

#: (kind, label, the page's read, the count's read or None), each read a function of the store
Query = tuple[str, str, Callable[[Any], object], Callable[[Any], object] | None]


@dataclass(frozen=True)
class Catalog:
    label: str
    root: Path
    db: str | None

    def store(self) -> Any:
        from labrig.store import open_store

        return open_store(self.root, db=self.db)

    def cli(self) -> list[str]:
        return ["--store", str(self.root), *(["--db", self.db] if self.db else [])]


@dataclass
class Figures:
    """Times (ms) by query, on the big catalog and its small peer."""

    big: dict[str, list[float]] = field(default_factory=dict)
    small: dict[str, list[float]] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1), interpolated between the nearest ranks."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * q
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def runs(call: Callable[[], object], repeat: int) -> list[float]:
    """``call`` once to warm, then ``repeat`` times (fewer when it is slow): ms each."""
    started = time.perf_counter()
    call()
    first = time.perf_counter() - started
    times = []
    for _ in range(max(5, min(repeat, int(QUERY_BUDGET_S / max(first, 1e-6))))):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def describe(catalog: Catalog) -> dict[str, Any]:
    from labrig.jobs.listing import JobQuery, read_jobs
    from labrig.review.listing import ResultQuery, count_results, list_results

    store = catalog.store()
    try:
        newest = list_results(store, ResultQuery(newest_first=True, limit=1))[0]
        with store.read() as session:
            [job] = read_jobs(session, JobQuery(newest_first=True, limit=1))
        with store.engine.connect() as conn:
            counts = {
                t: int(conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar() or 0)
                for t in ("attempts", "analysis_results", "outbox_events", "jobs", "captures")
            }
            busiest = conn.exec_driver_sql(
                "SELECT device_id FROM captures GROUP BY device_id ORDER BY count(*) DESC, "
                "device_id LIMIT 1"
            ).scalar()
        return counts | {
            # every one counted (the list's own counts stop past their page: COUNT_AHEAD)
            "results": count_results(store, ahead=counts["analysis_results"]).n,
            "result_id": newest.result_id,
            "attempt_id": newest.attempt_id,
            "job_id": job.id,
            "busiest_device": busiest,
        }
    finally:
        store.close()


def _results(facts: dict[str, Any]) -> list[Query]:
    from labrig.review.listing import ResultQuery as Q
    from labrig.review.listing import ResultStatusFilter, ReviewFilter, count_results, list_results

    def entry(kind: str, label: str, query: Q, counted: bool) -> Query:
        count = (lambda store: count_results(store, query)) if counted else None
        return kind, label, lambda store: list_results(store, query), count

    last = max(0, facts["results"] - PAGE)
    made: list[Query] = []
    for newest in (False, True):
        order = "newest" if newest else "oldest"
        for name, offset in (("0", 0), ("50", 50), ("5000", 5000), ("last", last)):
            query = Q(newest_first=newest, limit=PAGE, offset=min(offset, last))
            made.append(entry("page", f"page {order} first, offset {name}", query, False))
    for status in ResultStatusFilter:
        made.append(
            entry("page", f"status {status}", Q(status=status, newest_first=True, limit=PAGE), True)
        )
    for review in ReviewFilter:
        made.append(
            entry("page", f"review {review}", Q(review=review, newest_first=True, limit=PAGE), True)
        )
    both = Q(status=ResultStatusFilter.DEGRADED, review=ReviewFilter.REVISED, limit=PAGE)
    made.append(entry("page", "degraded and revised", both, True))
    made.append(entry("page", "every result", Q(limit=PAGE), True))
    month = datetime.now(UTC) - timedelta(days=30)
    made.append(
        entry(
            "page",
            "results of the last 30 days",
            Q(since=month, newest_first=True, limit=PAGE),
            True,
        )
    )
    searches = {
        "subject S0001": "S0001",
        "subject s00 (most)": "s00",
        "subject S0123": "S0123",
        "protocol gait": "gait",
        "protocol reach-l": "reach-l",
        "operator kpat": "kpat",
        "attempt id, 8": facts["attempt_id"][:8],
        "attempt id, 3": facts["attempt_id"][:3],
        "result id, 8": facts["result_id"][:8],
        "result id, whole": facts["result_id"],
    }
    for label, text in searches.items():
        made.append(
            entry("search", f"search {label}", Q(search=text, newest_first=True, limit=PAGE), True)
        )
    return made


def _attempts(facts: dict[str, Any]) -> list[Query]:
    """The Results screen's list: a page of attempts and its count, in each column's order, with
    each filter, and searched (the catalog's busiest camera: the walkway's, half of the
    attempts). A page at offset 5,000 is read as the screen's Older button reads it: after the
    position of the row before it (found on the untimed first call)."""
    from labrig.results.attempt_list import count_attempts, list_attempts
    from labrig.results.search import AttemptQuery as Q
    from labrig.results.search import AttemptSort, ReviewFilter, Source, StatusFilter

    month = datetime.now(UTC) - timedelta(days=30)
    screens: list[tuple[str, Any]] = [
        ("screen: attempts, newest page", Q(limit=READ)),
        ("screen: attempts, offset 5000", Q(limit=READ, offset=5000)),
        ("screen: attempts of the last 30 days", Q(limit=READ, since=month)),
    ]
    for sort in AttemptSort:
        for descending, offset in ((False, 0), (True, 5000)):
            query = Q(limit=READ, offset=offset, sort=sort, descending=descending)
            screens.append(
                (f"screen: by {sort}{' reversed' if descending else ''}, @{offset}", query)
            )
    for status in StatusFilter:
        screens.append((f"screen: status {status}", Q(limit=READ, status=status)))
    for review in ReviewFilter:
        screens.append((f"screen: review {review}", Q(limit=READ, review=review)))
    for source in (Source(rig="treadmill"), Source(rig="walkway"), Source(device_id=DEVICE)):
        word = source.rig or "a device"
        screens.append((f"screen: {word}'s attempts", Q(limit=READ, source=source)))
    both = Q(limit=READ, status=StatusFilter.BLOCKED, sort=AttemptSort.SUBJECT)
    screens.append(("screen: blocked, by subject", both))
    busiest = Source(device_id=facts["busiest_device"])
    screens.append(("screen: the busiest camera's attempts", Q(limit=READ, source=busiest)))
    deep = Q(limit=READ, offset=5000, source=busiest)
    screens.append(("screen: the busiest camera's attempts, @5000", deep))
    searched = [
        (f"screen: search {label}", Q(limit=READ, search=text))
        for label, text in (
            ("subject S0001", "S0001"),
            ("subject s00 (most)", "s00"),
            ("protocol gait", "gait"),
            ("protocol reach-l", "reach-l"),
            ("operator kpat", "kpat"),
            ("attempt id, 8", facts["attempt_id"][:8]),
        )
    ]
    by_subject = Q(limit=READ, offset=5000, search="s00", sort=AttemptSort.SUBJECT)
    searched.append(("screen: search s00 by subject, @5000", by_subject))
    made: list[Query] = []
    for kind, listed in (("page", screens), ("search", searched)):
        for label, query in listed:
            made.append(
                (
                    kind,
                    label,
                    _from_row(query) if query.offset else lambda s, q=query: list_attempts(s, q),
                    lambda s, q=query: count_attempts(s, q),
                )
            )
    return made


def _from_row(query: Any) -> Callable[[Any], object]:
    """``query``'s page read after the position of the row before its offset, as the Results
    screen reads an older page; the position is read on the first call (``runs``' warm-up)."""
    from dataclasses import replace

    from labrig.results.attempt_list import list_attempts

    found: dict[str, Any] = {}

    def page(store: Any) -> object:
        if "at" not in found:
            before = list_attempts(store, replace(query, offset=query.offset - 1, limit=1))
            found["at"] = before[0].position if before else None
        return list_attempts(store, replace(query, after=found["at"]))

    return page


def _in_session(read: Callable[[Any, Any], object], query: Any) -> Callable[[Any], object]:
    def call(store: Any) -> object:
        with store.read() as session:
            return read(session, query)

    return call


def _jobs(facts: dict[str, Any]) -> list[Query]:
    """The Queue screen's pages and ``labrig jobs``, and the status bar's counts."""
    from labrig.domain.jobs import JobState as S
    from labrig.jobs.listing import JobQuery as Q
    from labrig.jobs.listing import count_jobs, read_jobs, unsettled_counts

    month = datetime.now(UTC) - timedelta(days=30)
    queries = {
        "jobs: newest page": Q(newest_first=True, limit=SCREEN_PAGE),
        "jobs: offset 5000": Q(newest_first=True, limit=SCREEN_PAGE, offset=5000),
        "jobs: Ready": Q((S.READY,), newest_first=True, limit=SCREEN_PAGE),
        "jobs: failed or blocked": Q(
            (S.BLOCKED_BY_QUALITY, S.PERMANENT_FAILURE), newest_first=True, limit=SCREEN_PAGE
        ),
        "jobs: Succeeded": Q((S.SUCCEEDED,), newest_first=True, limit=SCREEN_PAGE),
        "jobs: stage kinematics": Q(stage="kinematics", newest_first=True, limit=SCREEN_PAGE),
        "jobs: last 30 days": Q(since=month, newest_first=True, limit=SCREEN_PAGE),
    }
    made: list[Query] = [
        ("page", label, _in_session(read_jobs, q), _in_session(count_jobs, q))
        for label, q in queries.items()
    ]
    search = Q(search=facts["job_id"][:8], newest_first=True, limit=SCREEN_PAGE)
    made.append(
        (
            "search",
            "jobs: search job id, 8",
            _in_session(read_jobs, search),
            _in_session(count_jobs, search),
        )
    )
    made.append(
        (
            "page",
            "jobs: the status bar's counts",
            _in_session(lambda session, _query: unsettled_counts(session), None),
            None,
        )
    )
    return made


def _captures() -> list[Query]:
    from labrig.capture.listing import CaptureQuery as Q
    from labrig.capture.listing import count_captures, read_captures

    queries = {
        "captures: newest page": Q(newest_first=True, limit=PAGE),
        "captures: offset 5000": Q(newest_first=True, limit=PAGE, offset=5000),
        "captures: committed": Q(("committed",), newest_first=True, limit=PAGE),
    }
    return [
        ("page", label, _in_session(read_captures, q), _in_session(count_captures, q))
        for label, q in queries.items()
    ]


def queries(facts: dict[str, Any]) -> list[Query]:
    """Every query timed; offsets past the end are clipped."""
    return [*_results(facts), *_attempts(facts), *_jobs(facts), *_captures()]


def measure_queries(figures: Figures, catalog: Catalog, repeat: int) -> None:
    from labrig.heap import frozen_heap

    facts = describe(catalog)
    print(
        f"  {catalog.label}: {facts['attempts']:,} attempts, {facts['results']:,} results, "
        f"{facts['jobs']:,} jobs, {facts['captures']:,} captures, {facts['outbox_events']:,} events"
    )
    times = figures.big if catalog.label == "big" else figures.small
    store = catalog.store()
    # as the window runs its loop: with what start-up made out of the full collections
    # (labrig.heap). Without it a full collection of this process's heap fell inside a run now
    # and then: 40-100 ms, on the small catalog as on the big one
    try:
        with frozen_heap():
            for kind, label, page, count in queries(facts):
                figures.kinds[label] = kind
                times[label] = runs(lambda page=page: page(store), repeat)
                if count is not None:
                    figures.kinds[f"{label}: count"] = kind
                    times[f"{label}: count"] = runs(lambda count=count: count(store), repeat)
    finally:
        store.close()


def print_queries(figures: Figures) -> dict[str, float]:
    """Each query's p50/p99 beside the small catalog's; the slowest p99 of each kind."""
    worst: dict[str, float] = {}
    for kind in ("page", "search"):
        print(f"{kind} queries (ms, p50 / p99; small catalog in brackets):")
        pooled = []
        for label, big in figures.big.items():
            if figures.kinds[label] != kind:
                continue
            small = figures.small[label]
            p99 = pct(big, 0.99)
            pooled += big
            worst[kind] = max(worst.get(kind, 0.0), p99)
            over = "  OVER" if p99 > TARGETS[kind] else ""
            print(
                f"  {label:<40} {pct(big, 0.5):8.2f} / {p99:8.2f}   "
                f"({pct(small, 0.5):6.2f} / {pct(small, 0.99):6.2f})  n={len(big)}{over}"
            )
        print(
            f"  {kind}: pooled p99 {pct(pooled, 0.99):.2f} ms, "
            f"slowest query's p99 {worst[kind]:.2f} ms"
        )
    return worst
