"""Sign-off of a real published result: stored as a revision that changes nothing, recording who,
when, the meaning and the digest of the effective result in the audit chain; cleared, visibly, by
a later correction or value set; refused without the reviewer role, on a stale view, with a
meaning that is not one, or when the same sign-off is already in force, storing nothing."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import func, select

from labrig.domain.corrections import parse_operation
from labrig.domain.roles import RoleRequiredError
from labrig.errors import LabrigError
from labrig.results.attempt_list import count_attempts, list_attempts
from labrig.results.search import AttemptQuery, ReviewFilter
from labrig.review.listing import ResultQuery, list_results
from labrig.store import migrate
from labrig.store.models import AuditEntry, OutboxEvent, ResultRevision, ResultSignOff
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


def _signed_off(rig: Rig) -> dict[str, tuple[str, int]]:
    """What the "signed off" filters read: result -> (meaning, the sign-off's revision)."""
    with rig.store.read() as session:
        return {r.result_id: (r.meaning, r.number) for r in session.scalars(select(ResultSignOff))}


def _filtered(rig: Rig) -> tuple[list[str], list[str], int]:
    """The results and attempts the "signed off" filters find, and the attempts' count."""
    query = AttemptQuery(review=ReviewFilter.SIGNED_OFF)
    results = list_results(rig.store, ResultQuery(review=ReviewFilter.SIGNED_OFF))
    attempts = list_attempts(rig.store, query)
    return (
        [r.result_id for r in results],
        [a.attempt_id for a in attempts],
        count_attempts(rig.store, query).n,
    )


def test_the_signed_off_filters_find_the_results_whose_sign_off_is_in_force(rig: Rig) -> None:
    reviews = rig.services.governance.revisions
    result = rig.published_id
    attempt = reviews.show(result).attempt_id
    assert _signed_off(rig) == {} and _filtered(rig) == ([], [], 0)

    reviews.revise(result, {"track:1.extent": 1}, "measured by hand")  # revised, not signed off
    assert _signed_off(rig) == {} and _filtered(rig) == ([], [], 0)
    signed = reviews.sign_off(result, "reviewed")
    assert _signed_off(rig) == {result: ("reviewed", signed.number)}
    assert _filtered(rig) == ([result], [attempt], 1)
    approved = reviews.sign_off(result, "approved")  # the latest sign-off is the one in force
    assert _signed_off(rig) == {result: ("approved", approved.number)}
    reviews.correct(result, [parse_operation("trim", "2-27")], "settling")  # clears it
    assert _signed_off(rig) == {} and _filtered(rig) == ([], [], 0)
    assert _migrated_again(rig) == {}  # worked out from the revisions alone, the same
    again = reviews.sign_off(result, "approved")
    assert _signed_off(rig) == {result: ("approved", again.number)}
    assert _filtered(rig) == ([result], [attempt], 1)
    # the other filters still find it, and their counts add up
    revised = AttemptQuery(review=ReviewFilter.REVISED)
    assert [a.attempt_id for a in list_attempts(rig.store, revised)] == [attempt]
    assert count_attempts(rig.store, AttemptQuery(review=ReviewFilter.UNREVISED)).n == (
        count_attempts(rig.store).n - 1
    )

    assert _migrated_again(rig) == {result: ("approved", again.number)}


def _migrated_again(rig: Rig) -> dict[str, tuple[str, int]]:
    """What migration 0026 works out from the revisions alone: the schema taken back to before it
    (Alembic's own downgrade), as an earlier Labrig left it, then opened again."""
    config = Config()
    config.set_main_option("script_location", str(migrate.MIGRATIONS_DIR))
    with rig.store.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0025_session_words_on_postgresql")
    migrate.upgrade(rig.store.engine)
    return _signed_off(rig)
