"""Fill a Labrig store with a lab-scale catalog, for benchmarks of list, search and filter queries.

    .venv/bin/python tests/benchmarks/make_catalog.py --store DIR [--attempts N | --quick]
        [--db postgresql+psycopg://USER@HOST:PORT/DB] [--seed S] [--now ISO-8601]

``--store`` must be an empty (or new) data folder, and ``--db`` an empty database: the store is
opened with :func:`labrig.store.open_store`, which creates and migrates the catalog, and the rows
are then written in bulk on the store's raw driver connection (``Store.raw_write``), one
transaction per chunk of 10,000 attempts (``executemany``; on PostgreSQL too). Progress, the time
taken, the row count of every table filled and what the app's own readers make of the catalog are
printed at the end.

What is generated, for N attempts (default 100,000; ``--quick``: 10,000):

- **sessions**: N/10, ten attempts each, spread over the 3 years before ``--now`` (working days,
  07:00-18:00 UTC), the newest about six hours ago; ~300 subject codes (``S0001``…, a few subjects
  with many sessions, most with few), 20 protocols (``gait-overground``, ``reach-left``…), 15
  operators (logins), 4 workstations.
- **rigs**: 4 stored rigs of 3 cameras each (places front, left, right), 12 devices in all:
  ``uvc:046d:082d:…`` and ``uvc:046d:085c:…`` webcams, ``ip:http://…`` MJPEG cameras and
  ``virtual:rig-1``…; their ``devices`` rows, as last verified.
- **attempts**: every one a rig recording of 3 cameras: 3 committed captures (3N), each with one
  capture segment and a manifest blob row, its ``attempt_captures`` rows, and a saved
  ``rig_recordings`` row with its sync figures. A few are marked interrupted.
- **media**: ONE tiny real media file and ONE timestamps file in the media store, shared by every
  capture segment (2 ``blobs`` rows); each capture's manifest gets a ``blobs`` row of its own
  (kind ``manifest``) under a unique random digest with no file behind it. ``labrig verify``
  therefore reports every manifest missing: the catalog is for queries, not for playback or
  analysis.
- **jobs**: 10 per attempt (10N), the calibrated rig's 3-D pipeline twice: rig.sync → media.qc →
  tracking.rig → reconstruction.3d → kinematics.3d as first requested (``Superseded``: replaced by a
  reprocess before it ran), and the reprocess that is in force (``supersedes_job_id`` links each to
  the job it replaced), with their ``job_dependencies`` (8 per attempt) and the ``job_outputs`` of
  every job that succeeded. Configurations, idempotency keys and output digests are computed as
  the queue computes them, from the registered stages.
- **results**: one ``analysis_results`` row per finished attempt, its ``labrig.result/1`` document
  built by the publisher's own ``build_document`` from those jobs and outputs: about 80 % published,
  12 % degraded (a stage ``SucceededDegraded``, with its reasons), 8 % blocked (a stage
  ``BlockedByQuality`` with its LABRIG_* code, or ``PermanentFailure`` after 3 attempts, its
  dependents failing with LABRIG_INPUT_UNAVAILABLE). The newest max(3, N/1000) attempts are
  pending: their analysis is Ready, Running or RetryWaiting part way. Kinematics and 3-D
  reconstruction come from a few dozen synthetic templates computed with the pipeline's own
  kinematics (``--series-points`` samples each, default 12, which keeps documents small).
- **revisions**: ~10 % of the published results older than two days are revised (1-3 value changes,
  ``labrig.revision/1``) and ~3 % signed off (``labrig.revision/2``, reviewed or approved, with the
  digest of the effective result it approves), each with its ``review.revised`` event and a link of
  the hash-chained audit trail (``audit_entries``), as ``labrig review`` records them.
- **outbox**: exactly 30 events per attempt (30N): capture.started and .committed, attempt.created,
  analysis.stage.requested/.completed/.failed, quality.degraded/.blocked, result.published,
  review.revised, and sync.object.acknowledged for the captures' objects and the result to three
  destinations, as many as make 30. Payloads are checked against the event catalog (a sample).
  Events are written in the order of their times. ``outbox_events.txid`` is left to the server
  (PostgreSQL) or empty (SQLite). The cursors of the two durable consumers (analysis.publisher,
  sync.indexer) are then set past every event, as if they had delivered them, so a window or
  worker opened on the catalog does not publish again; ``sync_objects`` stays empty.

Not generated: calibrations and rig calibrations (the rig calibration ids in the tracking jobs'
configurations name none, so no result is flagged), releases, roles, sync destinations.

Deterministic: the same ``--seed``, ``--attempts`` and ``--now`` give the same catalog (ids,
values, times). Stored times use the app's forms: naive UTC text with microseconds on SQLite
(``to_db_datetime``), ``timestamptz`` on PostgreSQL.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script, only this folder is on the path
    sys.path.insert(0, str(REPO))

from labrig.store.dialects import sqlite as sqlite_dialect  # noqa: E402
from tests.benchmarks.catalog import (  # noqa: E402
    DEFAULT_ATTEMPTS,
    QUICK_ATTEMPTS,
    fill,
    sqlite_time,
    to_us,
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Fill an empty Labrig store with a lab-scale catalog (see the module's "
        "docstring for what is generated)."
    )
    parser.add_argument("--store", required=True, type=Path, help="an empty data folder")
    parser.add_argument(
        "--attempts",
        type=int,
        default=DEFAULT_ATTEMPTS,
        metavar="N",
        help=f"attempts to generate (default {DEFAULT_ATTEMPTS:,})",
    )
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ATTEMPTS:,} attempts")
    parser.add_argument("--db", help="a postgresql+psycopg:// URL of an empty database")
    parser.add_argument("--seed", type=int, default=1, help="of the random stream (default 1)")
    parser.add_argument(
        "--now", help="when the catalog ends: ISO-8601, UTC if no zone (default: now)"
    )
    parser.add_argument(
        "--series-points",
        type=int,
        default=12,
        metavar="K",
        help="samples per track in the results' series and reconstructions (default 12)",
    )
    parser.add_argument("--no-check", action="store_true", help="skip the readers' check")
    args = parser.parse_args(argv)
    attempts = QUICK_ATTEMPTS if args.quick else args.attempts
    if attempts < 1:
        parser.error("--attempts must be at least 1")
    if args.series_points < 8:
        parser.error("--series-points must be at least 8 (the kinematics' smoothing window)")
    now = datetime.fromisoformat(args.now) if args.now else datetime.now(UTC)
    now = (now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)).replace(
        microsecond=0
    )
    assert sqlite_time(to_us(now)) == sqlite_dialect.to_db_datetime(now)
    fill(
        args.store,
        attempts=attempts,
        db=args.db,
        seed=args.seed,
        now=now,
        points=args.series_points,
        check=not args.no_check,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
