"""Roles of workstation users and the rules of who may do what.

Three roles, each including the ones below it: a reviewer may also capture and
calibrate, an admin may do everything. Roles are enforced once the catalog has
an admin; before that (a fresh, unconfigured workstation) everyone may do
everything, as before roles existed, and anyone may create the first admin.
After that only admins assign roles, and the last admin cannot be removed, so a
workstation never falls back to unenforced by accident.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

from labrig.errors import LabrigError, UsageError


class Role(StrEnum):
    TECHNICIAN = "technician"
    REVIEWER = "reviewer"
    ADMIN = "admin"


_RANK = {Role.TECHNICIAN: 1, Role.REVIEWER: 2, Role.ADMIN: 3}
NO_ROLE = "none"  # what ``set-role`` takes to revoke a user's role


class Action(StrEnum):
    """What a role allows; the value is the words a refusal uses."""

    CAPTURE = "recording or importing captures"
    CALIBRATE = "storing a calibration"
    REVISE = "revising a result"
    SIGN_OFF = "signing off a result"
    PUBLISH = "publishing a result"
    EXPORT = "exporting results"
    SYNC = "running sync to the archive"
    RELEASES = "activating or rolling back a release"
    SETTINGS = "changing settings"
    ASSIGN_ROLES = "assigning roles"


REQUIRED_ROLE: Mapping[Action, Role] = {
    Action.CAPTURE: Role.TECHNICIAN,
    Action.CALIBRATE: Role.TECHNICIAN,
    Action.REVISE: Role.REVIEWER,
    Action.SIGN_OFF: Role.REVIEWER,
    Action.PUBLISH: Role.REVIEWER,
    Action.EXPORT: Role.REVIEWER,
    Action.SYNC: Role.TECHNICIAN,
    Action.RELEASES: Role.ADMIN,
    Action.SETTINGS: Role.ADMIN,
    Action.ASSIGN_ROLES: Role.ADMIN,
}


class RoleRequiredError(LabrigError):
    """The user's role does not allow the action; the message names the role needed
    and who grants it."""

    code = "LABRIG_ROLE_REQUIRED"

    def __init__(self, message: str, *, needed: Role, user: str) -> None:
        super().__init__(message)
        self.needed, self.user = needed, user


class UnknownRoleError(LabrigError):
    code = "LABRIG_UNKNOWN_ROLE"


class LastAdminError(LabrigError):
    code = "LABRIG_LAST_ADMIN"


def normalize_user(name: str) -> str:
    """The catalog's spelling of a login: trimmed and lower-case (Windows logins ignore case)."""
    user = name.strip().lower()
    if not user or len(user) > 128 or any(ord(c) < 32 for c in user):
        raise UsageError(
            f"'{name}' is not a user name: give the person's login (1-128 printable characters)"
        )
    return user


def parse_role(text: str) -> Role | None:
    """A role name, or None for ``none`` (revoke)."""
    value = text.strip().lower()
    if value == NO_ROLE:
        return None
    try:
        return Role(value)
    except ValueError:
        raise UnknownRoleError(
            f"'{text}' is not a role; use one of {', '.join(r.value for r in Role)} "
            f"(or '{NO_ROLE}' to remove a user's role)"
        ) from None


def satisfies(role: Role | None, needed: Role) -> bool:
    return role is not None and _RANK[role] >= _RANK[needed]


def admins(roles: Mapping[str, Role]) -> list[str]:
    return sorted(user for user, role in roles.items() if role is Role.ADMIN)


def enforced(roles: Mapping[str, Role]) -> bool:
    """Roles are enforced once an admin exists; an unconfigured workstation works as before."""
    return bool(admins(roles))


def check(action: Action, user: str, roles: Mapping[str, Role]) -> None:
    """Raise :class:`RoleRequiredError` unless ``user`` may do ``action`` under the
    current ``roles``."""
    if not enforced(roles):
        return
    needed = REQUIRED_ROLE[action]
    held = roles.get(user)
    if satisfies(held, needed):
        return
    raise RoleRequiredError(
        _refusal(action, user, held, needed, admins(roles)), needed=needed, user=user
    )


def check_assignment(actor: str, target: str, new: Role | None, roles: Mapping[str, Role]) -> None:
    """The rules of assigning roles: the first admin by anyone, then admins only, never the
    last admin away."""
    current = admins(roles)
    if not current:
        if new is not Role.ADMIN:
            raise RoleRequiredError(
                "no one is admin on this workstation yet, so the first role to assign is admin. "
                "Make yourself admin first: "
                f'labrig users set-role {actor} admin --reason "…"',
                needed=Role.ADMIN,
                user=actor,
            )
        return
    check(Action.ASSIGN_ROLES, actor, roles)
    if current == [target] and new is not Role.ADMIN:
        raise LastAdminError(
            f"'{target}' is the only admin; make another user admin first, or the workstation "
            "would have no one left to assign roles"
        )


def _refusal(
    action: Action, user: str, held: Role | None, needed: Role, granted_by: Sequence[str]
) -> str:
    has = f"has the {held.value} role" if held is not None else "has no role on this workstation"
    above = [r.value for r in Role if _RANK[r] > _RANK[needed]]
    also = f" (or {' or '.join(above)})" if above else ""
    who = ", ".join(granted_by)
    return (
        f"{action.value} needs the {needed.value} role{also}; '{user}' {has}. "
        f"An admin ({who}) can grant it: "
        f'labrig users set-role {user} {needed.value} --reason "…"'
    )
