"""``labrig captures``, ``sessions``, ``import``, ``verify`` and ``recover``: the media store from
the command line."""

from __future__ import annotations

import argparse
import signal
import threading
import time
from pathlib import Path
from typing import Any

from labrig.access import AccessControl
from labrig.bootstrap import bootstrap
from labrig.capture import (
    Selection,
    WatchFolderIngestor,
    create_session,
    import_media,
    verify_store,
)
from labrig.capture.adopt import adopt_orphans
from labrig.capture.listing import CAPTURE_STATES, CaptureQuery, count_captures, read_captures
from labrig.capture.posthoc_sync import SYNC_METHODS
from labrig.capture.rigs import get_rig
from labrig.capture.session_listing import SessionQuery, count_sessions, read_sessions
from labrig.cli.common import services_for, store_for
from labrig.cli.output import (
    add_page_arguments,
    is_page,
    narrowed,
    page_asked,
    print_json,
    print_json_line,
    print_page_line,
)
from labrig.cli.when import add_period_arguments, days_ago, moment
from labrig.domain.roles import Action
from labrig.errors import LabrigError, UsageError
from labrig.pipeline import import_rig


def add_parser(commands: Any) -> None:
    captures = commands.add_parser("captures", help="list captures: state, digest, frames, drops")
    captures.add_argument("--json", action="store_true")
    captures.add_argument(
        "--state", action="append", choices=CAPTURE_STATES, help="only captures in these states"
    )
    captures.add_argument("--device", metavar="ID", help="only this device's captures")
    captures.add_argument("--session", metavar="ID", help="only this session's captures")
    add_period_arguments(captures, "captures started")
    add_page_arguments(captures, "captures")
    captures.set_defaults(run=run_captures)
    sessions = commands.add_parser(
        "sessions", help="list capture sessions: subject, protocol, operator, attempts"
    )
    sessions.add_argument("--json", action="store_true")
    sessions.add_argument(
        "--search",
        metavar="TEXT",
        help="only sessions whose subject, protocol or operator starts so",
    )
    add_period_arguments(sessions, "sessions begun")
    add_page_arguments(sessions, "sessions")
    sessions.set_defaults(run=run_sessions)
    imp = commands.add_parser(
        "import",
        help="import video files through the same commit path as recordings; with --rig, a "
        "rig's videos from separate devices as one attempt, synchronised after the fact",
    )
    imp.add_argument("files", nargs="*", metavar="FILE")
    imp.add_argument("--session", help="session the imported captures belong to")
    imp.add_argument(
        "--rig", metavar="NAME", help="the rig the videos are of (their places are its places)"
    )
    imp.add_argument(
        "--camera",
        action="append",
        default=[],
        metavar="PLACE=FILE",
        help="with --rig: one camera's video, at its place in the rig; repeat for each",
    )
    imp.add_argument(
        "--sync",
        choices=list(SYNC_METHODS),
        help="with --rig: how to find the offsets between the videos: flash (a lamp or clapper "
        "flash every camera sees)",
    )
    imp.add_argument("--json", action="store_true", help="with --rig: the attempt as JSON")
    imp.add_argument(
        "--accept-partial", action="store_true", help="import what decodes of a truncated file"
    )
    imp.set_defaults(run=run_import)
    verify = commands.add_parser(
        "verify",
        help="re-hash every stored blob and check every manifest (or only part of a large store)",
    )
    verify.add_argument(
        "--since",
        metavar="WHEN",
        help="only what was stored since WHEN: a local date (2026-12-01), a date and time "
        "(2026-12-01T08:00), or days ago (7d)",
    )
    verify.add_argument(
        "--unchecked-days",
        metavar="N",
        type=int,
        help="only blobs not found whole in the last N days (never checked ones included), "
        "oldest check first",
    )
    verify.add_argument("--json", action="store_true")
    verify.set_defaults(run=run_verify)
    watch = commands.add_parser(
        "watch", help="ingest media files dropped into a folder until Ctrl-C"
    )
    watch.add_argument("folder", metavar="DIR")
    watch.add_argument(
        "--seconds", type=float, default=None, help="stop after this long (default: run on)"
    )
    watch.add_argument(
        "--polling", action="store_true", help="poll instead of OS events (network shares)"
    )
    watch.set_defaults(run=run_watch)
    rec = commands.add_parser("recover", help="resolve captures left provisional by a crash")
    rec.add_argument("--json", action="store_true")
    rec.add_argument(
        "--adopt",
        action="store_true",
        help="also re-create the catalog rows of committed captures the catalog lost (listed by "
        "'labrig verify'), from their manifests in the media store, re-hashing every file",
    )
    rec.set_defaults(run=run_recover)


def run_captures(args: argparse.Namespace) -> int:
    query = CaptureQuery(
        tuple(args.state or ()), device=args.device, session=args.session, **page_asked(args)
    )
    paged = is_page(args)
    with store_for(args) as store, store.read() as session:
        rows = read_captures(session, query)
        total = count_captures(session, query) if paged and not args.json else len(rows)
    for c in rows:
        data = {
            "id": c.id,
            "state": c.state,
            "origin": c.origin,
            "device_id": c.device_id,
            "manifest_sha256": c.manifest_sha256,
            "frames": c.frame_count,
            "dropped_frames": c.dropped_frames,
            "started_at": c.started_at.isoformat(),
            "session_id": c.session_id,
        }
        if args.json:
            print_json_line(data)
        else:
            digest = (c.manifest_sha256 or "-")[:12]
            print(
                f"{c.id}  {c.state:<11} {c.origin:<12} {c.frame_count:>7} frames  "
                f"{c.dropped_frames:>4} dropped  {digest}  {c.device_id}"
            )
    if not rows and not args.json:
        filtered = query.states or query.device or query.session or narrowed(args)
        print("No capture matches." if filtered else "No captures.")
    if paged and not args.json:
        print_page_line("Captures", query.offset, len(rows), total)
    return 0


def run_sessions(args: argparse.Namespace) -> int:
    query = SessionQuery(args.search, **page_asked(args))
    paged = is_page(args)
    with store_for(args) as store, store.read() as session:
        rows = read_sessions(session, query)
        total = count_sessions(session, query) if paged and not args.json else len(rows)
    for row in rows:
        if args.json:
            print_json_line(vars(row) | {"created_at": row.created_at.isoformat()})
        else:
            began = row.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
            print(
                f"{row.id}  {began}  {row.attempts:>3} attempts  {row.subject_code}  "
                f"{row.protocol}  {row.operator}"
            )
    if not rows and not args.json:
        print("No session matches." if query.search or narrowed(args) else "No sessions.")
    if paged and not args.json:
        print_page_line("Sessions", query.offset, len(rows), total)
    return 0


def run_import(args: argparse.Namespace) -> int:
    if args.rig is not None or args.camera:
        return run_import_rig(args)
    if not args.files:
        raise UsageError("name the video files to import (or a rig's with --rig and --camera)")
    failed = 0
    with store_for(args) as store:
        store.refuse_if_damaged()  # before a file is copied: refused whole, not file by file
        AccessControl(store).require(Action.CAPTURE)
        for name in args.files:
            try:
                result = import_media(
                    store, Path(name), session_id=args.session, accept_partial=args.accept_partial
                )
                print(f"imported {name}: capture {result.capture_id}, {result.frame_count} frames")
            except LabrigError as exc:
                failed += 1
                print(f"refused {name}: {exc.code}: {exc.message}")
    return 1 if failed else 0


def run_verify(args: argparse.Namespace) -> int:
    selection = Selection(
        stored_since=moment(args.since) if args.since is not None else None,
        unchecked_since=days_ago(args.unchecked_days) if args.unchecked_days is not None else None,
    )
    with store_for(args) as store:
        report = verify_store(store, selection=selection)
    if args.json:
        print_json(
            {
                "ok": not report.problems,
                "full": report.full,
                "recorded": report.recorded,
                "blobs_checked": report.blobs_checked,
                "captures_checked": report.captures_checked,
                "problems": [vars(p) for p in report.problems],
            }
        )
    else:
        print(f"Checked {report.blobs_checked} blobs and {report.captures_checked} captures.")
        if not report.full:
            print(
                "A partial check: files no catalog row references and catalog text are looked at "
                "by the full 'labrig verify'."
            )
        if not report.recorded:
            print(
                "The catalog refuses writes (it is damaged): when each blob was found whole is not "
                "kept."
            )
        for p in report.problems:
            print(f"  MISMATCH {p.subject}: {p.problem}")
        print(
            "Everything matches."
            if not report.problems
            else (
                f"{len(report.problems)} problems: restore these files from your archive or backup."
            )
        )
    return 1 if report.problems else 0


def run_recover(args: argparse.Namespace) -> int:
    with store_for(args, allow_missing_catalog=args.adopt) as store:
        store.refuse_if_damaged()  # before a folder is quarantined or a salvaged segment stored
        report = bootstrap(store=store).recover()  # and rig recordings made attempts
        adopted = []
        if args.adopt:
            AccessControl(store).require(Action.CAPTURE)
            adopted = adopt_orphans(store, AccessControl(store).actor())
    left = [a for a in adopted if a.outcome != "adopted"]
    if args.json:
        print_json(report.to_json() + [a.to_json() for a in adopted])
        return 1 if left else 0
    if not report.items and not adopted:
        print("Nothing to recover.")
    for item in report.items:
        print(f"{item.capture_id}  {item.outcome:<11} {item.frames:>7} frames  {item.detail}")
    for one in adopted:
        who = one.capture_id or f"manifest {one.manifest_sha256[:12]}…"
        print(f"{who}  {one.outcome:<11} {one.frames:>7} frames  {one.detail}")
    return 1 if left else 0


def run_watch(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        raise UsageError(
            f"{folder} is not a folder; create it or give the folder the device software writes to"
        )
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with store_for(args) as store:
        store.refuse_if_damaged()  # before a file is copied
        AccessControl(store).require(Action.CAPTURE)
        watcher = WatchFolderIngestor(store, folder, polling=args.polling or None)
        watcher.start()
        print(f"Watching {folder} (Ctrl-C to stop)", flush=True)
        shown = 0
        deadline = time.monotonic() + args.seconds if args.seconds else None
        while not stop.wait(0.5) and (deadline is None or time.monotonic() < deadline):
            for item in watcher.results[shown:]:
                outcome = (
                    f"capture {item.capture_id}" if item.capture_id else f"refused {item.code}"
                )
                print(f"{item.path}: {outcome} ({item.message})", flush=True)
            shown = len(watcher.results)
        watcher.stop()
    return 0


def run_import_rig(args: argparse.Namespace) -> int:
    """``labrig import --rig NAME --camera PLACE=FILE … --sync flash``: one attempt."""
    if args.rig is None or not args.camera or args.sync is None or args.files:
        raise UsageError(
            "a rig's videos are imported with --rig NAME, one --camera PLACE=FILE for each and "
            "--sync flash, and no other file"
        )
    files = []
    for text in args.camera:
        place, eq, name = text.partition("=")
        if not eq or not place or not name:
            raise UsageError(f"--camera {text!r} is not PLACE=FILE, e.g. front=front.mp4")
        files.append((place.strip(), Path(name)))
    with services_for(args) as services:
        services.store.refuse_if_damaged()
        services.capture.access.require(Action.CAPTURE)
        rig = get_rig(services.store, args.rig)
        session_id = args.session or create_session(
            services.queue, rig.name, "rig import", services.capture.access.actor().user
        )
        done = import_rig(services.queue, rig, files, args.sync, session_id)
    summary = {
        "attempt_id": done.attempt_id,
        "session_id": session_id,
        "rig": rig.name,
        "captures": [
            {"place": p, "capture_id": c.capture_id, "frames": c.frame_count}
            for p, c in done.captures
        ],
        "posthoc": done.posthoc.to_json(),
        "sync": done.sync.to_json(),
    }
    if args.json:
        print_json(summary)
    else:
        print(f"Imported attempt {done.attempt_id} of the rig {rig.name} (session {session_id}):")
        for place, commit in done.captures:
            print(f"  {place:<12} {commit.frame_count:>6} frames  capture {commit.capture_id}")
        print(f"Post-hoc sync: {done.posthoc.summary()}")
        print(f"Sync: {done.sync.summary()}")
        if not done.posthoc.trustworthy:
            print(
                "The offsets are not trustworthy: the attempt's rig.sync is blocked until an "
                "operator releases it. Record again with a flash every camera sees."
            )
    return 0 if done.posthoc.trustworthy else 1
