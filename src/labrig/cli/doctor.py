"""``labrig doctor``: is this workstation fit to record and analyse? Exits 1 when not."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import asdict
from typing import Any

from labrig.cli.output import print_json
from labrig.health import Check, Status, check_database, check_free_space, check_opencv, check_store_path
from labrig.store import paths

QT_PROBE_TIMEOUT_S = 60


def add_parser(commands: Any) -> None:
    p = commands.add_parser("doctor", help="check Qt, OpenCV, the database, the data folder and free space")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def check_qt() -> Check:
    """Start Qt in a child process: a missing platform plugin aborts the process that tries."""
    try:
        proc = subprocess.run([sys.executable, "-m", "labrig.ui.probe"], capture_output=True, text=True,
                              timeout=QT_PROBE_TIMEOUT_S, env=os.environ.copy())
    except subprocess.TimeoutExpired:
        return Check("qt", Status.FAIL, f"Qt did not start within {QT_PROBE_TIMEOUT_S} s",
                     "check the display connection, or set QT_QPA_PLATFORM=offscreen for headless use")
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return Check("qt", Status.FAIL, f"Qt could not start its platform plugin: {last}",
                     "install Qt's runtime libraries (see README), or set QT_QPA_PLATFORM=offscreen")
    facts = json.loads(proc.stdout.strip().splitlines()[-1])
    return Check("qt", Status.OK, f"Qt {facts['qt']} (PySide6 {facts['pyside']}), platform plugin "
                 f"'{facts['platform']}'")


def run(args: argparse.Namespace) -> int:
    root = paths.resolve_root(args.store)
    checks = [check_qt(), check_opencv(), check_store_path(root)]
    if checks[-1].status is not Status.FAIL:
        checks += [check_database(root), check_free_space(root)]
    failed = any(c.status is Status.FAIL for c in checks)
    if args.json:
        print_json({"ok": not failed, "store": str(root), "checks": [asdict(c) for c in checks]})
    else:
        print(f"Labrig doctor — data folder {root}")
        for c in checks:
            print(f"  [{c.status.value.upper():>4}] {c.name:<10} {c.detail}")
            if c.fix:
                print(f"         {'':<10} what to do: {c.fix}")
        print("Problems found: see 'what to do' above." if failed else "All checks passed.")
    return 1 if failed else 0
