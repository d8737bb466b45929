"""``labrig audit``: the hash-chained audit trail, and verifying it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from labrig.cli.common import services_for
from labrig.cli.output import print_json


def add_parser(commands: Any) -> None:
    audit = commands.add_parser("audit", help="the audit trail: who changed what, when and why")
    audit.add_argument(
        "--object", dest="object_id", metavar="ID", help="only entries about this object"
    )
    audit.add_argument("--json", action="store_true")
    audit.set_defaults(run=run_list)
    sub = audit.add_subparsers(dest="audit_command", metavar="ACTION")
    verify = sub.add_parser(
        "verify", help="recompute the hash chain; exit 1 naming the first broken entry"
    )
    # also before 'verify'
    verify.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    verify.set_defaults(run=run_verify)


def run_list(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        entries = services.governance.audit.entries(args.object_id)
    if args.json:
        print_json([e.to_json() for e in entries])
        return 0
    if not entries:
        print("The audit trail is empty.")
    for e in entries:
        print(
            f"{e.seq:>6}  {e.recorded_at[:23]}  {e.actor}@{e.host}  {e.action}  {e.object_type} "
            f"{e.object_id}\n        why: {e.reason}\n        change: "
            f"{json.dumps(e.change, sort_keys=True, ensure_ascii=False)}"
        )
    return 0


def run_verify(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        report = services.governance.audit.verify()
    if args.json:
        print_json(report.to_json())
    elif report.intact:
        print(
            f"Audit trail intact: {report.entries} entries; head is entry {report.head.seq}, "
            f"hash {report.head.entry_hash}"
        )
    else:
        print(
            f"Audit trail BROKEN at entry {report.first_broken}: {report.problem}. Entries up to "
            f"{report.head.seq} verify. Keep this database as evidence and restore from a backup."
        )
    return 0 if report.intact else 1
