"""``labrig sync``: copy committed objects to the archive (once, or until Ctrl-C); its status;
its destination."""

from __future__ import annotations

import argparse
import signal
import threading
from typing import Any

from labrig.cli.common import services_for
from labrig.cli.output import print_json, print_json_line
from labrig.sync import BatchReport, SyncStatus, sync_status


def add_parser(commands: Any) -> None:
    sync = commands.add_parser(
        "sync", help="copy committed media, manifests and published results to the archive"
    )
    sync.add_argument(
        "--once",
        action="store_true",
        help="copy what is pending now (retrying failed objects at "
        "once), then stop; exit 1 if something is still pending",
    )
    sync.add_argument("--json", action="store_true")
    sync.add_argument("--poll", type=float, default=5.0, help=argparse.SUPPRESS)
    sync.set_defaults(run=run_sync)
    sub = sync.add_subparsers(dest="sync_command", metavar="ACTION")
    status = sub.add_parser("status", help="acknowledged and pending objects, the last error")
    status.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    status.set_defaults(run=run_status)
    configure = sub.add_parser(
        "configure", help="set the destination folder (a network share); admin"
    )
    configure.add_argument(
        "--to", required=True, metavar="DIR", help="the destination folder (must exist)"
    )
    configure.add_argument(
        "--name", help="what events and status call it (default: the folder's name)"
    )
    configure.add_argument("--reason", required=True, help="why (kept in the audit trail)")
    configure.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    configure.set_defaults(run=run_configure)


def run_sync(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        if args.once:
            report = services.sync.run_once(retry_now=True)
            _print_batch(report, args.json, quiet=False)
            remaining = sync_status(services.store)
            if not args.json:
                print(f"{remaining.acknowledged} acknowledged, {remaining.pending} pending.")
            return 0 if remaining.pending == 0 and report.error is None else 1
        stop, wake = threading.Event(), threading.Event()
        received: list[int] = []

        def interrupt(signum: int, _frame: object) -> None:
            # Ctrl-C or SIGTERM: the batch under way finishes (no copy is cut off), then it stops;
            # a second Ctrl-C interrupts at once
            received.append(signum)
            stop.set()
            wake.set()
            signal.signal(signal.SIGINT, signal.default_int_handler)

        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, interrupt)
        if not args.json:
            print("Syncing until Ctrl-C …", flush=True)
        try:
            services.sync.run_forever(
                stop,
                poll_seconds=args.poll,
                on_batch=lambda r: _print_batch(r, args.json, quiet=True),
                wake=wake,
            )
        finally:
            stop.set()
    return 128 + received[0] if received else 0


def run_status(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        status = sync_status(services.store)
    if getattr(args, "json", False):
        print_json(status.to_json())
    else:
        _print_status(status)
    return 0


def run_configure(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        config = services.sync.configure(args.to, args.reason, args.name)
    if getattr(args, "json", False):
        print_json(config.to_json())
    else:
        print(
            f"Sync destination '{config.name}' is {config.location} (archive id "
            f"{config.destination_id}). Run 'labrig sync' to copy."
        )
    return 0


def _print_batch(report: BatchReport, as_json: bool, *, quiet: bool) -> None:
    if quiet and not (report.acknowledged or report.failed or report.error):
        return
    if as_json:
        print_json_line(report.to_json())
        return
    print(
        f"Batch {report.batch_id[:8]} to '{report.destination}': {len(report.acknowledged)} "
        f"acknowledged, {len(report.failed)} failed (of {report.pending}); audit chain head entry "
        f"{report.audit_chain_head.seq}",
        flush=True,
    )
    for sha in report.failed:
        print(f"  {sha[:12]}…: {report.said_failure(sha)}")
    if report.error:
        print(f"  stopped: {report.said_error()}")


def _print_status(s: SyncStatus) -> None:
    if s.destination is None:
        print(
            "Sync is not configured. An admin sets the destination: labrig sync configure --to DIR "
            '--reason "…"'
        )
    else:
        print(f"Destination '{s.destination['name']}': {s.destination['location']}")
    print(
        f"Objects: {s.objects}; acknowledged {s.acknowledged}, pending {s.pending} ({s.failing} "
        "failing)" + (f"; {s.not_indexed} event(s) not indexed yet" if s.not_indexed else "")
    )
    for content, counts in sorted(s.by_content.items()):
        print(
            f"  {content:<17} {counts['acknowledged']:>6} acknowledged  {counts['pending']:>6} "
            "pending"
        )
    if s.last_batch:
        print(
            f"Last batch: {s.last_batch['finished_at'] or s.last_batch['started_at']}, "
            f"{s.last_batch['acknowledged']} acknowledged, {s.last_batch['failed']} failed"
        )
    if s.last_error:
        print(f"Last error ({s.last_error['at']}): {s.last_error['error']}")
    if s.next_retry_at:
        print(f"Next retry: {s.next_retry_at}")
