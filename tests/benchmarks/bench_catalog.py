"""The review list, search, the Results screen and the dispatcher on a lab-scale catalog.

    .venv/bin/python tests/benchmarks/bench_catalog.py [--store DIR] [--quick] [--db URL|cluster]
        [--repeat N]

``--store DIR``: a catalog made by ``make_catalog.py`` (left as it was: nothing here writes to it);
without it one is built in a temporary folder with the catalog package (100,000 attempts;
``--quick``: 10,000; ``--attempts N``). ``--db``: the catalog on PostgreSQL: with ``--store``,
the URL of the database ``make_catalog.py --db`` filled; without, ``cluster`` (a throwaway
server, ``tests/support/pg_cluster.py``) or the URL of a server where the benchmark may create
and drop databases of its own (as ``bench_queue.py --db`` does, ``pg_server.py``); the catalogs
it builds there are ANALYZEd before they are measured (right after a bulk load, before
autovacuum has, the idle dispatcher's query walks the whole outbox: 130 ms at 300,000 events).

Every figure is printed beside its peer measured in the same run: the same thing on a small
catalog of 100 attempts (3,000 events) built afresh, and for the page query, the equivalent
indexed ``SELECT … LIMIT 50`` in the plain ``sqlite3`` CLI (``psql`` on PostgreSQL) timed by
the CLI itself (``.timer on``: sqlite3 3.40 gives its wall time in whole ms, so its CPU time is
used; ``\\timing``).

- **page** and **search** (``catalog_queries.py``): the app's own ``labrig.review.listing``
  (``list_results`` and ``count_results``, through ``open_store`` and its read sessions, as
  ``labrig review list`` calls them): pages of 50 at offsets 0, 50, 5000 and the last, oldest and
  newest first; each status and review filter; the last 30 days; counts; searches by subject code,
  protocol and operator prefixes and by attempt- and result-id prefixes. The Results screen's
  pages of 200 attempts and their counts (newest, offset 5000, the last 30 days, each column's
  order, each filter, the busiest camera's at offsets 0 and 5000, searches by subject, protocol,
  operator and attempt id, and a search sorted by subject at offset 5000); the Queue screen's
  pages of 200 jobs (newest, offset 5000, Ready, failed or blocked, Succeeded, one stage, the last
  30 days, a job id's start) and the status bar's counts; ``labrig captures``' pages (newest,
  offset 5000, committed). Each is run once to warm, then ``--repeat`` times (default 30; fewer
  when one run takes over 1 s: 20 s a query at most); p50/p99 each.
- **review list**: ``labrig --store DIR review list --limit 50`` (and ``--search S0001``) as a
  process, wall clock, median of 5 after one warm-up. This process and the window's start from
  compiled bytecode, as an installed Labrig does (``tests/benchmarks/installed.py``), not from a
  checkout's sources recompiled at each start (``PYTHONDONTWRITEBYTECODE``); the warm-up fills it.
- **dispatcher**: the app's dispatcher as the worker builds it (``bootstrap``: the result
  publisher and the sync indexer), ``dispatch_once()`` with nothing to deliver (make_catalog set
  their cursors past every event), 200 passes after 5 to warm.
- **first paint**: the real window (``build_main_window``, offscreen), opened on the Results
  screen in a process of its own (``catalog_window.py``) as ``labrig`` opens it (recovery, the
  dispatcher thread and the catalog's page check started; the job executor is not, so no job of
  the catalog runs), timed from just before the process is started to the first paint of the
  attempt list's viewport with rows in it; median of 3 after one warm-up. Beside it, the list's
  read alone (``list_attempts`` and ``count_attempts`` of its first page, as the screen reads
  them on a pool thread).

The targets (the issue): each page, filter and search query p99 ≤ 50 ms; first paint ≤ 1 s;
``review list --limit 50`` ≤ 0.5 s; an idle dispatcher pass ≤ 5 ms, the same on the big
catalog as on the small one (within 2x or 1 ms). The last line is
``page_p99_ms=… search_p99_ms=… first_paint_s=… dispatch_idle_ms=…``: the slowest page (or
filter, or count) query's p99, the slowest search's, the median first paint and the idle pass's
p99, all on the big catalog.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, redirect_stdout
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script, only this folder is on the path
    sys.path.insert(0, str(REPO))

from tests.benchmarks.catalog_queries import (  # noqa: E402
    PAGE,
    Catalog,
    Figures,
    describe,
    measure_queries,
    pct,
    print_queries,
    runs,
)
from tests.benchmarks.installed import bytecode_cache  # noqa: E402

SMALL_ATTEMPTS = 100  # 3,000 events


# -- the catalogs ----------------------------------------------------------------------------------


def build(root: Path, attempts: int, db: str | None) -> None:
    from tests.benchmarks.catalog import fill

    started, out = time.perf_counter(), io.StringIO()
    with redirect_stdout(out):
        now = datetime.now(UTC).replace(microsecond=0)
        fill(root, attempts=attempts, db=db, now=now, check=False)
    print(f"  built {attempts:,} attempts in {time.perf_counter() - started:.0f}s ({root})")
    if db:  # the planner's statistics, as autovacuum would gather them after a bulk load
        store = Catalog("", root, db).store()
        try:
            with store.engine.begin() as conn:
                conn.exec_driver_sql("ANALYZE")
        finally:
            store.close()


@contextmanager
def catalogs(args: argparse.Namespace) -> Iterator[tuple[Catalog, Catalog]]:
    """The big catalog (``--store``, else built) and the small one (always built)."""
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="labrig-cat-")))
        server = None
        if args.db:
            from tests.benchmarks.pg_server import server_for

            server, where = stack.enter_context(server_for(args.db))
            print(f"PostgreSQL: {where}")

        def database() -> str | None:
            """A fresh database of the benchmark's own (None: SQLite in the folder)."""
            return server.url(stack.enter_context(server.fresh_database())) if server else None

        if args.store:
            big = Catalog("big", args.store, args.db)
        else:
            big = Catalog("big", scratch / "big", database())
            build(big.root, 10_000 if args.quick else args.attempts, big.db)
        small = Catalog("small", scratch / "small", database())
        build(small.root, SMALL_ATTEMPTS, small.db)
        yield big, small


def cli_peer(catalog: Catalog, offset: int, repeat: int) -> list[float]:
    """The page's equivalent SELECT in the database's own CLI, timed by the CLI: ms each."""
    sql = (
        "SELECT r.id, r.attempt_id, r.status, r.degraded, r.created_at, (SELECT count(*) FROM "
        "result_revisions v WHERE v.result_id = r.id), EXISTS (SELECT 1 FROM analysis_results n "
        "WHERE n.attempt_id = r.attempt_id AND (n.created_at > r.created_at OR (n.created_at = "
        "r.created_at AND n.id > r.id))), s.subject_code, s.protocol, s.operator, a.number FROM "
        "analysis_results r JOIN attempts a ON a.id = r.attempt_id JOIN sessions s ON s.id = "
        f"a.session_id ORDER BY r.created_at DESC, r.id DESC LIMIT {PAGE} OFFSET {offset};\n"
    )
    if catalog.db is None:
        script = ".timer on\n.output /dev/null\n" + sql * (repeat + 1)
        command = ["sqlite3", "-readonly", str(catalog.root / "labrig.db")]
        pattern = r"Run Time: real [\d.]+ user ([\d.]+) sys ([\d.]+)"
    else:
        from sqlalchemy.engine import make_url

        url = make_url(catalog.db).set(drivername="postgresql")
        script = "\\o /dev/null\n\\timing on\n" + sql * (repeat + 1)
        command = ["psql", "-X", "-q", url.render_as_string(hide_password=False)]
        pattern = r"Time: ([\d.]+) ms()"
    out = subprocess.run(command, input=script, capture_output=True, text=True, check=True)
    found = re.findall(pattern, out.stdout + out.stderr)
    scale = 1000.0 if catalog.db is None else 1.0
    return [sum(float(x or 0) for x in groups) * scale for groups in found][1:]


# -- processes: review list and the window ---------------------------------------------------------


def review_list(catalog: Catalog, *extra: str) -> float:
    """``labrig … review list --limit 50 [extra]`` as a process: median wall s of 5 (1 warm)."""
    labrig = Path(sys.executable).with_name("labrig")
    command = [str(labrig), *catalog.cli(), "review", "list", "--limit", str(PAGE), *extra]
    env = {k: v for k, v in os.environ.items() if k != "LABRIG_DB"}
    times = []
    for _ in range(6):
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times[1:])


def page_read(catalog: Catalog) -> list[float]:
    """What the Results screen reads for its list (``ResultsPage.read_list``: the newest page of
    attempts and their count), on its own: ms each."""
    from labrig.heap import frozen_heap
    from labrig.results.attempt_list import count_attempts, list_attempts
    from labrig.results.search import AttemptQuery

    store = catalog.store()
    query = AttemptQuery()
    try:
        with frozen_heap():  # as the window's loop runs (labrig.heap)
            return runs(lambda: (list_attempts(store, query), count_attempts(store, query)), 10)
    finally:
        store.close()


# -- the dispatcher --------------------------------------------------------------------------------


def dispatch_idle(catalog: Catalog) -> list[float]:
    """``dispatch_once()`` with nothing to deliver, 200 passes after 5: ms each."""
    from labrig.bootstrap import bootstrap

    services = bootstrap(store=catalog.store())
    try:
        dispatcher = services.dispatcher
        for _ in range(5):
            assert not any(dispatcher.dispatch_once().values()), "the catalog had events to deliver"
        times = []
        for _ in range(200):
            started = time.perf_counter()
            counts = dispatcher.dispatch_once()
            times.append((time.perf_counter() - started) * 1000)
            assert not any(counts.values())
        return times
    finally:
        services.close()


def run(big: Catalog, small: Catalog, repeat: int) -> list[tuple[str, bool, str]]:
    """Every measurement, printed; the targets (text, met, the last line's figure)."""
    events = {c.label: describe(c)["outbox_events"] for c in (big, small)}
    print(f"Queries (each warmed once, then up to {repeat} runs):")
    figures = Figures()
    for catalog in (big, small):
        measure_queries(figures, catalog, repeat)
    worst = print_queries(figures)
    cli = "sqlite3" if big.db is None else "psql"
    for name, offset in (("offset 0", 0), ("last page", max(0, describe(big)["results"] - PAGE))):
        peer = cli_peer(big, offset, repeat)
        print(
            f"  peer: {cli} CLI, the page's SELECT newest first, {name}: p50 "
            f"{pct(peer, 0.5):.2f} / p99 {pct(peer, 0.99):.2f} ms (n={len(peer)})"
        )
    print("Review list as a process (s, median of 5; small catalog in brackets):")
    listed = []
    for extra in ((), ("--search", "S0001")):
        listed.append(review_list(big, *extra))
        shown = " ".join(("--limit", str(PAGE), *extra))
        print(f"  review list {shown:<30} {listed[-1]:.3f}   ({review_list(small, *extra):.3f})")
    print("Dispatcher pass with nothing to deliver (ms, p50 / p99):")
    idle = {}
    for c in (big, small):
        times = dispatch_idle(c)
        idle[c.label] = pct(times, 0.99)
        print(
            f"  {c.label:<6} {events[c.label]:>10,} events  "
            f"{pct(times, 0.5):6.2f} / {idle[c.label]:6.2f}"
        )
    from tests.benchmarks.catalog_window import first_paint

    print("Results screen, first paint (the real window, offscreen; s from the process's start):")
    paint = {}
    for c in (big, small):
        at = first_paint(c.root, c.db)
        paint[c.label] = at["painted"]
        read = page_read(c)
        print(
            f"  {c.label:<6} {paint[c.label]:.3f}  (imported {at['imported']:.2f}, services "
            f"{at['services']:.2f}, window built {at['window']:.2f}, shown {at['shown']:.2f}; "
            f"{int(at['rows'])} rows; the list's read alone: p50 {pct(read, 0.5):.1f} / "
            f"p99 {pct(read, 0.99):.1f} ms)"
        )
    same = idle["big"] <= max(2 * idle["small"], idle["small"] + 1.0)
    return [
        ("each page/filter query p99 <= 50 ms", worst["page"] <= 50, f"{worst['page']:.2f}"),
        ("each search p99 <= 50 ms", worst["search"] <= 50, f"{worst['search']:.2f}"),
        ("first paint <= 1 s", paint["big"] <= 1.0, f"{paint['big']:.3f}"),
        ("review list --limit 50 <= 0.5 s", max(listed) <= 0.5, f"{max(listed):.3f}"),
        ("idle dispatcher pass p99 <= 5 ms", idle["big"] <= 5.0, f"{idle['big']:.2f}"),
        (
            f"idle pass the same at {events['big']:,} events as at {events['small']:,} "
            f"(within 2x or 1 ms: {idle['big']:.2f} vs {idle['small']:.2f})",
            same,
            "",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--store", type=Path, help="a catalog made by make_catalog.py")
    parser.add_argument("--db", metavar="URL|cluster", help="the catalog on PostgreSQL")
    parser.add_argument("--quick", action="store_true", help="build 10,000 attempts")
    parser.add_argument("--attempts", type=int, default=100_000, help="to build (100,000)")
    parser.add_argument("--repeat", type=int, default=30, help="runs of each query (30)")
    args = parser.parse_args(argv)
    if args.store and args.db == "cluster":
        parser.error("--db cluster starts an empty server: give a URL with --store")
    # its processes (review list, the window) start from compiled bytecode, as installed
    with bytecode_cache(), catalogs(args) as (big, small):
        targets = run(big, small, args.repeat)
    for text, met, figure in targets:
        print(f"target: {text}{f' ({figure})' if figure else ''}: {'met' if met else 'NOT met'}")
    page, search, paint, _listed, idle, _same = (figure for _, _, figure in targets)
    print(
        f"page_p99_ms={page} search_p99_ms={search} first_paint_s={paint} dispatch_idle_ms={idle}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
