"""The ``labrig`` command: the GUI by default, sub-commands for headless work."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence

from labrig import __version__
from labrig.cli import (
    audit_cmd,
    calibrate_cmd,
    calibrate_rig_cmd,
    capture_cmd,
    demo_cmd,
    devices_cmd,
    doctor,
    events_cmd,
    export_cmd,
    jobs_cmd,
    releases_cmd,
    review_cmd,
    rigs_cmd,
    sync_cmd,
    users_cmd,
)
from labrig.errors import LabrigError
from labrig.fsutil import disk_full
from labrig.store import DB_ENV_VAR

SUBCOMMANDS = (
    doctor,
    demo_cmd,
    devices_cmd,
    rigs_cmd,
    capture_cmd,
    calibrate_cmd,
    calibrate_rig_cmd,
    jobs_cmd,
    releases_cmd,
    events_cmd,
    review_cmd,
    users_cmd,
    audit_cmd,
    export_cmd,
    sync_cmd,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="labrig",
        description="Labrig capture-and-analysis workstation. With no command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"labrig {__version__}")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check this installation (Qt, OpenCV, migrations, "
        "recording, analysis) in a scratch folder, one line per check; exit 1 on a failure",
    )
    parser.add_argument(
        "--store",
        metavar="DIR",
        help="data folder (database and media); "
        "default: $LABRIG_STORE, else the per-user data folder",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="a shared catalog and queue on PostgreSQL, "
        "postgresql+psycopg://USER@HOST/DB (default: $LABRIG_DB, else SQLite in the data folder)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.add_parser(commands)
    return parser


STOPPED_FULL = (
    "the command stopped before it finished. What it had committed is kept and verified as "
    "before; what it had not is not kept (an interrupted recording stays for 'labrig recover', a "
    "job is run again)"
)


def _print_any_name() -> None:
    """Let output carry any file name: a name whose bytes are not UTF-8 reaches Python as lone
    surrogates, which printing refuses (UnicodeEncodeError, mid-command); shown as ``\\xNN``."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    _print_any_name()
    # FFmpeg's own log lines (an H.264 encoder probed and missing, a codec's notes) would reach the
    # user's terminal under Labrig's output; OpenCV reads this when it first uses FFmpeg
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
    args = build_parser().parse_args(argv)
    if args.db:  # every store this process (and its children) opens uses it
        os.environ[DB_ENV_VAR] = args.db
    if args.self_test:  # scratch folders only: never --store or the user's data folder
        from labrig.scenarios import run_self_test

        return run_self_test()
    try:
        if args.command is None:
            from labrig.cli.gui import launch

            return launch(args.store)
        return int(args.run(args))
    except LabrigError as exc:
        print(f"labrig: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away ('labrig jobs --json | head'): stop quietly
        # Python flushes stdout again at exit: point it at nothing so that flush cannot fail too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a command ended by SIGPIPE
    except Exception as exc:  # only a full disk is answered here; anything else is re-raised
        full = disk_full(exc, STOPPED_FULL)
        if full is None:
            raise
        print(f"labrig: {full.code}: {full.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
