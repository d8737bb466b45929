"""``labrig releases``: register, health-check, activate and roll back analysis releases.

Activating and rolling back need the admin role (once roles are enforced) and are audited.
"""

from __future__ import annotations

import argparse
from typing import Any

from labrig.cli.common import services_for
from labrig.cli.output import print_json


def add_parser(commands: Any) -> None:
    releases = commands.add_parser(
        "releases", help="analysis releases: list, register, check, activate, rollback"
    )
    sub = releases.add_subparsers(dest="releases_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="every release with its status and health")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=run_list)
    register = sub.add_parser("register", help="record the pipeline this build runs as a release")
    register.add_argument(
        "--version", dest="release_version", help="a version name (default: Labrig's version)"
    )
    register.set_defaults(run=run_register)
    check = sub.add_parser("check", help="run the health check on reference data with known truth")
    check.add_argument("release_id", metavar="ID")
    check.add_argument("--json", action="store_true")
    check.set_defaults(run=run_check)
    activate = sub.add_parser("activate", help="make a healthy release the active one")
    activate.add_argument("release_id", metavar="ID")
    activate.add_argument(
        "--reason", help="why (kept in the audit trail; default: its health check passed)"
    )
    activate.set_defaults(run=run_activate)
    rollback = sub.add_parser(
        "rollback", help="retire the active release and restore the previous one"
    )
    rollback.add_argument(
        "--reason", required=True, help="why (kept with the release and in the audit trail)"
    )
    rollback.set_defaults(run=run_rollback)


def run_list(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        releases = services.releases.list()
    if args.json:
        print_json([vars(r) for r in releases])
        return 0
    if not releases:
        print("No releases. Record this build's pipeline with 'labrig releases register'.")
    for r in releases:
        health = (
            "not checked" if r.health is None else ("passed" if r.health["passed"] else "FAILED")
        )
        note = f"  ({r.note})" if r.note else ""
        print(
            f"{r.id}  {r.version:<12} {r.status:<12} health {health:<12} digest "
            f"{r.digest[:12]}…{note}"
        )
    return 0


def run_register(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        release = services.releases.register(args.release_version)
    print(
        f"Release {release.version}: {release.id} (digest {release.digest[:12]}…, {release.status})"
    )
    return 0


def run_check(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        report = services.releases.check(args.release_id)
    if args.json:
        print_json(report.to_json())
    else:
        for c in report.checks:
            print(
                f"  [{'OK' if c.ok else 'FAIL':>4}] {c.name}: {c.measured:.3f} (expected "
                f"{c.expected:.3f} {c.tolerance})"
            )
        print(f"Health check {'passed' if report.passed else 'FAILED'}: {report.detail}")
    return 0 if report.passed else 1


def run_activate(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        release = services.releases.activate(args.release_id, args.reason)
    print(
        f"Release {release.version} is active; new analysis jobs carry its digest "
        f"{release.digest[:12]}…"
    )
    return 0


def run_rollback(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        restored = services.releases.rollback(args.reason)
    print(
        "Rolled back. Active now: "
        f"{restored.version if restored else 'no release (the built-in pipeline)'}"
    )
    return 0
