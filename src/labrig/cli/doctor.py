"""``labrig doctor``: is this workstation fit to record and analyse? Exits 1 when not."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from labrig.cli.output import print_json
from labrig.health import (
    Status,
    check_catalog_pages,
    check_database,
    check_free_space,
    check_opencv,
    check_qt,
    check_store_path,
)
from labrig.store import paths


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "doctor",
        help="check Qt, OpenCV, the database and its pages, the data folder and free space",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    root = paths.resolve_root(args.store)
    checks = [check_qt(), check_opencv(), check_store_path(root)]
    if checks[-1].status is not Status.FAIL:
        database = check_database(root)
        checks.append(database)
        # the whole file read: damage the check at every open cannot see (an index missing a row)
        if database.status is not Status.FAIL:
            checks.append(check_catalog_pages(root))
        checks.append(check_free_space(root))
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
