"""Sign-off of a real published result: stored as a revision that changes nothing, recording who,
when, the meaning and the digest of the effective result in the audit chain; cleared, visibly, by
a later correction or value set; refused without the reviewer role, on a stale view, with a
meaning that is not one, or when the same sign-off is already in force, storing nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from labrig.domain.corrections import parse_operation
from labrig.domain.roles import RoleRequiredError
from labrig.errors import LabrigError
from labrig.store.models import AuditEntry, OutboxEvent, ResultRevision
from tests.integration.review.conftest import Rig, as_user


def counts(rig: Rig) -> tuple[int, ...]:
    with rig.store.read() as session:
        return tuple(
            session.scalar(select(func.count()).select_from(model)) or 0
            for model in (ResultRevision, OutboxEvent, AuditEntry)
        )


def test_a_sign_off_records_the_effective_digest_and_a_later_correction_clears_it(
    rig: Rig,
) -> None:
    reviews = rig.services.governance.revisions
    automatic = reviews.automatic_document(rig.published_id)
    corrected = reviews.correct(rig.published_id, [parse_operation("trim", "2-27")], "settling")
    values = reviews.show(rig.published_id).fields
    signed = reviews.sign_off(rig.published_id, "Approved", base_id=corrected.id)
    assert signed.sign_off is not None and signed.sign_off.meaning == "approved"
    assert (signed.changes, signed.operations, signed.reviewer) == ([], [], "alice")
    shown = reviews.show(rig.published_id)
    assert shown.sign_off is not None and shown.sign_off.in_force
    assert shown.sign_off.describe().startswith("Approved by alice at ")
    assert shown.fields == values  # a sign-off changes no value
    entry = rig.services.governance.audit.entries(rig.published_id)[-1]
    assert (entry.action, entry.reason) == ("review.sign_off", "signed off as approved")
    assert entry.change["sign_off"] == {
        "meaning": "approved",
        "approved_digest": signed.sign_off.approved_digest,
    }
    assert rig.services.governance.audit.verify().intact

    # the same effective data signed off again gives the same digest; a different one does not
    again = reviews.sign_off(rig.published_id, "reviewed", "second look")
    assert again.sign_off is not None
    assert again.sign_off.approved_digest == signed.sign_off.approved_digest

    later = reviews.correct(rig.published_id, [parse_operation("occlude", "0@5-6")], "hand")
    state = reviews.show(rig.published_id).sign_off
    assert state is not None and not state.in_force
    assert (state.number, state.cleared_by, state.cleared_reviewer) == (
        again.number,
        later.number,
        "alice",
    )
    assert "Sign-off cleared" in state.describe() and f"revision {later.number}" in state.describe()
    # signed off again, over the new data: a new digest, in force
    renewed = reviews.sign_off(rig.published_id, "approved")
    assert renewed.sign_off is not None
    assert renewed.sign_off.approved_digest != signed.sign_off.approved_digest
    state = reviews.show(rig.published_id).sign_off
    assert state is not None and state.in_force and state.number == renewed.number
    # a value set by hand clears it too
    reviews.revise(rig.published_id, {"track:1.extent": 1}, "measured by hand")
    state = reviews.show(rig.published_id).sign_off
    assert state is not None and not state.in_force
    assert reviews.automatic_document(rig.published_id) == automatic


def test_refused_sign_offs_store_nothing(rig: Rig) -> None:
    reviews = rig.services.governance.revisions
    first = reviews.sign_off(rig.published_id, "reviewed")
    before = counts(rig)
    for attempt, code in (
        (lambda: reviews.sign_off(rig.published_id, "ok"), "LABRIG_SIGNOFF_MEANING"),
        (lambda: reviews.sign_off(rig.published_id, "reviewed"), "LABRIG_REVISION_NO_CHANGE"),
        (
            lambda: reviews.sign_off(rig.published_id, "approved", base_id=rig.published_id),
            "LABRIG_REVISION_CONFLICT",
        ),
        (lambda: reviews.sign_off(rig.blocked_id, "approved"), "LABRIG_RESULT_NOT_PUBLISHED"),
    ):
        with pytest.raises(LabrigError) as refused:
            attempt()
        assert refused.value.code == code, refused.value.message
    assert counts(rig) == before
    # on the current view, another meaning is taken
    reviews.sign_off(rig.published_id, "approved", base_id=first.id)
    assert counts(rig)[0] == before[0] + 1


def test_signing_off_needs_the_reviewer_role_once_roles_are_enforced(rig: Rig) -> None:
    ada = as_user(rig.store, "ada")
    ada.set_role("ada", "admin", "lab manager")
    ada.set_role("tom", "technician", "bench technician")
    ada.set_role("rita", "reviewer", "senior analyst")
    before = counts(rig)
    with pytest.raises(RoleRequiredError) as info:
        rig.services_as("tom").governance.revisions.sign_off(rig.published_id, "approved")
    assert "signing off a result needs the reviewer role" in info.value.message
    assert counts(rig) == before
    signed = rig.services_as("rita").governance.revisions.sign_off(rig.published_id, "approved")
    assert signed.reviewer == "rita"
