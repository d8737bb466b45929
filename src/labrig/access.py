"""Who may do what on this workstation: users' roles in the catalog, checked by the services.

The user is the operating-system login (``getpass.getuser()``), as strong as the
workstation's own sign-in. Services call :meth:`AccessControl.authorize` inside
the transaction of the change it guards, so the CLI and the GUI obey the same
rules and a role change cannot slip between the check and the change. The rules
themselves are in :mod:`labrig.domain.roles`.
"""

from __future__ import annotations

import getpass
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.domain import roles as rules
from labrig.domain.audit import Actor, require_reason
from labrig.domain.roles import Action, Role
from labrig.errors import LabrigError
from labrig.events import record_audit
from labrig.store import Store, utcnow
from labrig.store.models import RoleAssignment


class UnknownUserError(LabrigError):
    code = "LABRIG_UNKNOWN_USER"


def os_login() -> str:
    """The operating-system login of this process."""
    try:
        return getpass.getuser()
    except (OSError, KeyError) as exc:
        raise UnknownUserError(
            "could not tell who is logged in to this computer; sign in with your own "
            "account (or set USERNAME/LOGNAME) and try again"
        ) from exc


@dataclass(frozen=True)
class UserRole:
    """A user's current role and the assignment that gave it."""

    user: str
    role: str | None  # None: the role was removed
    assigned_by: str
    assigned_at: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class Roster:
    current_user: str
    enforced: bool  # False until an admin exists: everyone may do everything, as before roles
    users: list[UserRole]

    def to_json(self) -> dict[str, Any]:
        return {
            "current_user": self.current_user,
            "enforced": self.enforced,
            "users": [u.to_json() for u in self.users],
        }


@dataclass(frozen=True)
class RoleChange:
    user: str
    previous: str | None
    role: str | None
    changed: bool  # False when the user already had that role (nothing recorded)
    audit_seq: int | None


def _latest(session: Session) -> dict[str, RoleAssignment]:
    latest: dict[str, RoleAssignment] = {}
    for row in session.scalars(select(RoleAssignment).order_by(RoleAssignment.seq)):
        latest[row.username] = row
    return latest


def current_roles(session: Session) -> dict[str, Role]:
    """Each user's current role (users whose role was removed are absent)."""
    return {user: Role(row.role) for user, row in _latest(session).items() if row.role is not None}


class AccessControl:
    """Role checks and role assignment. Thread-safe: it holds no state but the store
    and two providers."""

    def __init__(
        self,
        store: Store,
        *,
        user: Callable[[], str] = os_login,
        host: Callable[[], str] = socket.gethostname,
    ) -> None:
        self.store, self._user, self._host = store, user, host

    def actor(self) -> Actor:
        return Actor(rules.normalize_user(self._user()), self._host())

    def authorize(self, session: Session, action: Action) -> Actor:
        """The acting user, if their role allows ``action`` (in ``session``'s transaction); else
        :class:`~labrig.domain.roles.RoleRequiredError`."""
        actor = self.actor()
        rules.check(action, actor.user, current_roles(session))
        return actor

    def require(self, action: Action) -> Actor:
        """:meth:`authorize` in a read transaction of its own, for actions that are not audited."""
        with self.store.read() as session:
            return self.authorize(session, action)

    def roster(self) -> Roster:
        with self.store.read() as session:
            latest = _latest(session)
            roles = current_roles(session)
        users = [
            UserRole(u, r.role, r.assigned_by, r.assigned_at.isoformat(), r.reason)
            for u, r in sorted(latest.items())
        ]
        return Roster(self.actor().user, rules.enforced(roles), users)

    def set_role(self, user: str, role: str | Role | None, reason: str) -> RoleChange:
        """Give ``user`` a role (None or ``"none"`` removes it), with the reason, in
        the audit trail."""
        target = rules.normalize_user(user)
        new = rules.parse_role(role) if isinstance(role, str) else role
        why = require_reason(reason, "changing a user's role")
        with self.store.write() as session:
            actor = self.actor()
            roles = current_roles(session)
            rules.check_assignment(actor.user, target, new, roles)
            previous = roles.get(target)
            before = previous.value if previous is not None else None
            after = new.value if new is not None else None
            if previous == new:
                return RoleChange(target, before, after, False, None)
            session.add(
                RoleAssignment(
                    username=target,
                    role=after,
                    assigned_by=actor.user,
                    reason=why,
                    assigned_at=utcnow(),
                )
            )
            entry = record_audit(
                session,
                actor,
                "roles.set",
                "user",
                target,
                why,
                {"user": target, "previous_role": before, "role": after},
            )
            return RoleChange(target, before, after, True, entry.seq)
