"""``labrig users``: who has which role on this workstation, and assigning roles."""

from __future__ import annotations

import argparse
from typing import Any

from labrig.cli.common import services_for
from labrig.cli.output import print_json
from labrig.domain.roles import NO_ROLE, Role


def add_parser(commands: Any) -> None:
    users = commands.add_parser("users", help="users and their roles (technician, reviewer, admin)")
    users.add_argument("--json", action="store_true")
    users.set_defaults(run=run_list)
    sub = users.add_subparsers(dest="users_command", metavar="ACTION")
    set_role = sub.add_parser(
        "set-role", help="give a user a role (admins only, once an admin exists)"
    )
    set_role.add_argument("user", metavar="USER", help="the person's login on this computer")
    set_role.add_argument(
        "role", metavar="ROLE", help=f"{', '.join(r.value for r in Role)}, or {NO_ROLE}"
    )
    set_role.add_argument("--reason", required=True, help="why (kept in the audit trail)")
    set_role.set_defaults(run=run_set_role)


def run_list(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        roster = services.governance.access.roster()
    if args.json:
        print_json(roster.to_json())
        return 0
    print(f"You are {roster.current_user}.")
    if not roster.enforced:
        print(
            "Roles are not enforced: no one is admin yet, so everyone may do everything. "
            "To start, make yourself admin: "
            f'labrig users set-role {roster.current_user} admin --reason "…"'
        )
    for u in roster.users:
        print(
            f"{u.user:<24} {u.role or '(none)':<11} set by {u.assigned_by} at "
            f"{u.assigned_at[:19]}: {u.reason}"
        )
    return 0


def run_set_role(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        change = services.governance.access.set_role(args.user, args.role, args.reason)
    if not change.changed:
        print(f"{change.user} already has the role {change.role or NO_ROLE}; nothing changed.")
    else:
        print(
            f"{change.user}: {change.previous or NO_ROLE} → {change.role or NO_ROLE} "
            f"(audit entry {change.audit_seq})"
        )
    return 0
