"""The ``labrig`` command: the GUI by default, sub-commands for headless work."""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import cast

import labrig
from labrig.errors import LabrigError
from labrig.fsutil import disk_full
from labrig.store import DB_ENV_VAR
from labrig.store.dialects.sqlite import damaged_pages

#: each command and the module of ``labrig.cli`` that adds it (with its verbs), in the order of the
#: help. A command line that names a command imports its module alone: 'labrig review list' loads
#: neither OpenCV nor numpy nor the capture and calibration packages
COMMAND_MODULES = {
    "doctor": "doctor",
    "demo": "demo_cmd",
    "devices": "devices_cmd",
    "record": "devices_cmd",
    "rigs": "rigs_cmd",
    "captures": "capture_cmd",
    "sessions": "capture_cmd",
    "import": "capture_cmd",
    "verify": "capture_cmd",
    "watch": "capture_cmd",
    "recover": "capture_cmd",
    "calibrate": "calibrate_cmd",
    "calibrate-rig": "calibrate_rig_cmd",
    "jobs": "jobs_cmd",
    "worker": "jobs_cmd",
    "releases": "releases_cmd",
    "events": "events_cmd",
    "review": "review_cmd",
    "users": "users_cmd",
    "audit": "audit_cmd",
    "export": "export_cmd",
    "sync": "sync_cmd",
}


def command_modules(argv: Sequence[str] | None = None) -> list[ModuleType]:
    """The modules whose commands the parser of ``argv`` needs: the named command's alone, else
    (no command, a misspelt one, ``--help``) every one, so the help and the error list them all."""
    names = list(dict.fromkeys(COMMAND_MODULES.values()))
    command = _command_named(sys.argv[1:] if argv is None else argv)
    if command in COMMAND_MODULES:
        names = [COMMAND_MODULES[command]]
    return [importlib.import_module(f"labrig.cli.{name}") for name in names]


def _command_named(argv: Sequence[str]) -> str | None:
    """The command word of ``argv``: its first word that is not an option of ``labrig`` itself
    or an option's value."""
    pre = argparse.ArgumentParser(add_help=False)
    for option in ("--store", "--db"):
        pre.add_argument(option)
    for flag in ("--version", "--self-test"):
        pre.add_argument(flag, action="store_true")
    pre.add_argument("command", nargs="?")
    try:
        known, _ = pre.parse_known_args(argv)
    except SystemExit:  # an option without its value: the full parser says so
        return None
    return cast(str | None, known.command)


class _Version(argparse.Action):
    """``--version``: the version looked up when asked for, not at every command's start."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"labrig {labrig.__version__}")  # on stdout, as argparse's own version action
        parser.exit()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of ``argv`` (default: this process's arguments): with every command, or with
    only the one ``argv`` names."""
    parser = argparse.ArgumentParser(
        prog="labrig",
        description="Labrig capture-and-analysis workstation. With no command, opens the window.",
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
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
    for module in command_modules(argv):
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
    args = build_parser(argv).parse_args(argv)
    if args.db:  # every store this process (and its children) opens uses it
        os.environ[DB_ENV_VAR] = args.db
    if args.self_test:  # scratch folders only: never --store or the user's data folder
        from labrig.scenarios import run_self_test

        return run_self_test()
    if args.command is None:
        from labrig.cli.gui import launch

        return reported(lambda: launch(args.store))
    return reported(lambda: int(args.run(args)))


def reported(command: Callable[[], int]) -> int:
    """Run ``command``; its exit code, or the code of what stopped it, reported on stderr as
    every command's errors are (a typed error's code and message, no traceback)."""
    try:
        return command()
    except LabrigError as exc:
        print(f"labrig: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away ('labrig jobs --json | head'): stop quietly
        # Python flushes stdout again at exit: point it at nothing so that flush cannot fail too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a command ended by SIGPIPE
    except Exception as exc:  # only a full disk or damaged pages met midway; else re-raised
        typed = disk_full(exc, STOPPED_FULL) or damaged_pages(exc)
        if typed is None:
            raise
        print(f"labrig: {typed.code}: {typed.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
