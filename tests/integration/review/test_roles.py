"""Roles in the service layer: unenforced on a fresh workstation, then enforced for
revising, releases and capture; every refusal names the role needed and who can grant it,
and nothing stored changes."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from labrig.capture.sources import Mode
from labrig.domain.roles import LastAdminError, RoleRequiredError, UnknownRoleError
from labrig.errors import LabrigError
from labrig.releases.health import Check, HealthReport
from labrig.releases.service import ReleaseService
from labrig.store.models import (
    AuditEntry,
    OutboxEvent,
    ReleaseRecord,
    ResultRevision,
    RoleAssignment,
)
from tests.integration.review.conftest import Rig, as_user


def _counts(rig: Rig) -> tuple[int, ...]:
    with rig.store.read() as session:
        return tuple(
            session.scalar(select(func.count()).select_from(m)) or 0
            for m in (ResultRevision, OutboxEvent, AuditEntry, RoleAssignment, ReleaseRecord)
        )


def _staff(rig: Rig) -> None:
    admin = as_user(rig.store, "ada")
    admin.set_role("ada", "admin", "lab manager")
    admin.set_role("rita", "reviewer", "senior analyst")
    admin.set_role("tom", "technician", "bench technician")


def _releases(rig: Rig, user: str) -> ReleaseService:
    report = HealthReport(True, (Check("reference", 1.0, 1.0, "exact", True),), "stand-in")
    return ReleaseService(rig.store, rig.services.queue, lambda: report, as_user(rig.store, user))


def test_an_unconfigured_workstation_lets_everyone_work_as_before(rig: Rig) -> None:
    roster = rig.services.governance.access.roster()
    assert (roster.current_user, roster.enforced, roster.users) == ("alice", False, [])
    revision = rig.services_as("anyone").governance.revisions.revise(
        rig.published_id, {"track:0.extent": 1}, "ok"
    )
    assert revision.reviewer == "anyone"
    releases = _releases(rig, "anyone")
    release = releases.register("1")
    releases.check(release.id)
    assert releases.activate(release.id).status == "active"


def test_the_first_role_must_be_admin_and_anyone_may_create_that_first_admin(rig: Rig) -> None:
    access = rig.services.governance.access
    before = _counts(rig)
    with pytest.raises(RoleRequiredError) as info:
        access.set_role("bob", "technician", "new hire")
    assert (
        "first role to assign is admin" in info.value.message
        and "set-role alice admin" in info.value.message
    )
    assert _counts(rig) == before
    change = access.set_role("Alice ", "admin", "first admin of this bench")
    assert (change.user, change.previous, change.role, change.changed) == (
        "alice",
        None,
        "admin",
        True,
    )
    assert access.roster().enforced
    [entry] = rig.services.governance.audit.entries("alice")
    assert (entry.action, entry.actor, entry.reason, entry.change) == (
        "roles.set",
        "alice",
        "first admin of this bench",
        {"user": "alice", "previous_role": None, "role": "admin"},
    )


def test_after_that_only_admins_assign_roles_and_the_last_admin_stays(rig: Rig) -> None:
    _staff(rig)
    before = _counts(rig)
    with pytest.raises(RoleRequiredError) as info:
        as_user(rig.store, "rita").set_role("rita", "admin", "promote myself")
    assert info.value.code == "LABRIG_ROLE_REQUIRED" and info.value.needed == "admin"
    assert "admin role" in info.value.message and "An admin (ada)" in info.value.message
    ada = as_user(rig.store, "ada")
    with pytest.raises(LastAdminError):
        ada.set_role("ada", "reviewer", "stepping down")
    with pytest.raises(UnknownRoleError):
        ada.set_role("tom", "superuser", "x")
    with pytest.raises(LabrigError) as no_reason:
        ada.set_role("tom", "reviewer", " ")
    assert no_reason.value.code == "LABRIG_REASON_REQUIRED"
    assert _counts(rig) == before
    assert not ada.set_role("tom", "technician", "same again").changed  # nothing to record
    assert _counts(rig) == before
    ada.set_role("rita", "admin", "second admin")
    ada.set_role("ada", "none", "moved to another lab")
    roles = {u.user: u.role for u in as_user(rig.store, "rita").roster().users}
    assert roles == {"ada": None, "rita": "admin", "tom": "technician"}
    assert rig.services.governance.audit.verify().intact


@pytest.mark.parametrize("user", ["tom", "stranger"])
def test_revising_needs_the_reviewer_role_once_roles_are_enforced(rig: Rig, user: str) -> None:
    _staff(rig)
    before = _counts(rig)
    with pytest.raises(RoleRequiredError) as info:
        rig.services_as(user).governance.revisions.revise(
            rig.published_id, {"track:0.extent": 1}, "why"
        )
    message = info.value.message
    assert "revising a result needs the reviewer role (or admin)" in message
    assert (
        "has the technician role" if user == "tom" else "has no role on this workstation"
    ) in message
    assert f"labrig users set-role {user} reviewer" in message and "An admin (ada)" in message
    assert _counts(rig) == before
    for allowed in ("rita", "ada"):
        rig.services_as(allowed).governance.revisions.revise(
            rig.published_id, {"track:0.extent": 2 + len(allowed)}, f"checked by {allowed}"
        )


def test_releases_need_an_admin_and_are_audited(rig: Rig) -> None:
    _staff(rig)
    release = _releases(rig, "ada").register("2026.11")
    _releases(rig, "ada").check(release.id)
    before = _counts(rig)
    for user in ("rita", "tom"):
        with pytest.raises(
            RoleRequiredError, match="activating or rolling back a release needs the admin role"
        ):
            _releases(rig, user).activate(release.id)
    assert _counts(rig) == before
    _releases(rig, "ada").activate(release.id, "validated on the reference set")
    with pytest.raises(RoleRequiredError):
        _releases(rig, "rita").rollback("drift")
    _releases(rig, "ada").rollback("drift on reference data")
    entries = [e for e in rig.services.governance.audit.entries() if e.object_type == "release"]
    assert [(e.action, e.actor, e.reason) for e in entries] == [
        ("release.activate", "ada", "validated on the reference set"),
        ("release.rollback", "ada", "drift on reference data"),
    ]
    assert entries[0].change["digest"] == release.digest


def test_capture_needs_the_technician_role_once_roles_are_enforced(rig: Rig) -> None:
    _staff(rig)
    with pytest.raises(RoleRequiredError) as info:
        rig.services_as("visitor").capture.start_recording("virtual:markers", Mode(640, 480, 30.0))
    assert "recording or importing captures needs the technician role" in info.value.message
    recorder = rig.services_as("tom").capture.start_recording(
        "virtual:markers", Mode(640, 480, 30.0), planned_seconds=1.0
    )
    recorder.stop()
