"""The Review page on a real published result: revising by clicking, refusals in words,
roles and conflicts.

The store is a copy of one template (a published and a blocked result, recorded and analysed once
per test run); each test acts as a named user on the workstation ``bench-1``. What was stored is
read back through the services.
"""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from labrig.capture.frame_tags import read_frame_tag
from labrig.domain.corrections import parse_operation
from labrig.domain.idempotency import sha256_hex
from labrig.ui.common.result_view import METRIC_COLUMNS
from labrig.ui.common.roles_policy import NO_ADMIN_POLICY
from labrig.ui.review.page import ReviewPage
from labrig.ui.review.widgets import AUTOMATIC_COLUMN, CHANGE_COLUMN, EFFECTIVE_COLUMN
from tests.ui.review_helpers import (
    FIELD,
    LEFT,
    WAIT_MS,
    Bench,
    Rig,
    as_user,
    counts,
    open_result,
    open_tab,
    staff,
)


def _type_revision(qtbot: QtBot, page: ReviewPage, field: str, value: str, reason: str) -> None:
    """Click the field's row in the values table (which picks it in the form), then type the
    value and reason."""
    open_tab(qtbot, page, page.values)
    row = page.values.row_of(field)
    assert row is not None, f"the values table has no row for {field}"
    rect = page.values.visualItemRect(page.values.item(row, 0))
    qtbot.mouseClick(page.values.viewport(), LEFT, pos=rect.center())
    assert page.form.field() == field
    for edit, text in ((page.form.value, value), (page.form.reason, reason)):
        edit.clear()
        qtbot.keyClicks(edit, text)


def _cells(page: ReviewPage, field: str) -> tuple[str, str, str]:
    row = page.values.row_of(field)
    assert row is not None
    automatic, effective, change = (
        page.values.item(row, c).text() for c in (AUTOMATIC_COLUMN, EFFECTIVE_COLUMN, CHANGE_COLUMN)
    )
    return automatic, effective, change


def test_a_reviewer_revises_a_value_by_clicking_and_sees_it_beside_the_automatic_one(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.review_page("rita")
    automatic_document = services.governance.revisions.automatic_document(rig.published_id)
    assert "rita" in page.user.text() and not page.policy.isHidden()  # no admin yet
    # the blocked one cannot be revised
    assert page.list_status.text() == "1 published result, newest first."
    open_result(qtbot, page, rig.published_id)
    automatic, effective, change = _cells(page, FIELD)
    assert automatic == effective and change == "— (automatic)"
    assert page.form.button.isEnabled() and page.history.rowCount() == 0

    _type_revision(qtbot, page, FIELD, "812.5", "marker 0 was occluded for ten frames")
    qtbot.mouseClick(page.form.button, LEFT)

    qtbot.waitUntil(lambda: page.form.status.text().startswith("Revision 1 saved"), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: _cells(page, FIELD)[1] == "812.50", timeout=WAIT_MS)
    assert _cells(page, FIELD)[0] == automatic  # the automatic value stays beside the revised one
    assert "revision 1 by rita" in _cells(page, FIELD)[2] and "occluded" in _cells(page, FIELD)[2]
    assert (
        page.values.item(page.values.row_of(FIELD) or 0, EFFECTIVE_COLUMN)
        .background()
        .color()
        .name()
        == "#ffe2a8"
    )
    assert page.history.rowCount() == 1
    assert [page.history.item(0, c).text() for c in (0, 1, 4)] == [
        "1",
        "rita",
        "marker 0 was occluded for ten frames",
    ]
    assert f"{automatic} → 812.50" in page.history.item(0, 3).text()
    assert page.form.value.text() == page.form.reason.text() == ""
    qtbot.waitUntil(lambda: page.model.rows[0].revisions == 1, timeout=WAIT_MS)
    # stored: the revision beside the result, which stays byte-identical, with its audit entry
    shown = services.governance.revisions.show(rig.published_id)
    [revision] = shown.revisions
    assert (revision.reviewer, revision.base_id, revision.changes[0].new) == (
        "rita",
        rig.published_id,
        812.5,
    )
    assert services.governance.revisions.automatic_document(rig.published_id) == automatic_document
    assert sha256_hex(automatic_document) == shown.automatic_digest
    assert [e.action for e in services.governance.audit.entries(rig.published_id)] == [
        "review.revise"
    ]


def test_the_no_admin_policy_is_stated_until_an_admin_is_assigned(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, _ = bench.review_page("rita")
    assert not page.policy.isHidden() and page.policy.text() == NO_ADMIN_POLICY
    assert page.reviewer is not None and page.reviewer.refusal is None  # anyone may revise

    staff(rig.store)
    page.hide()
    page.show()  # shown again: who is signed in, and the roster, are read again
    qtbot.waitUntil(page.policy.isHidden, timeout=WAIT_MS)
    assert page.user.text() == "Signed in as rita (reviewer role)."


def test_an_empty_reason_is_refused_in_words_and_nothing_is_stored(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.review_page("rita")
    open_result(qtbot, page, rig.published_id)
    before = counts(services.store)

    _type_revision(qtbot, page, FIELD, "812.5", "   ")
    qtbot.mouseClick(page.form.button, LEFT)

    assert page.form.status.text().startswith(
        "Not saved: a revision needs a reason: say why the automatic value"
    )
    assert page.focusWidget() is page.form.reason  # where to type the fix
    page.form.value.setText("twelve")
    qtbot.keyClicks(page.form.reason, "typed from the lab book")
    # the service refuses what it cannot read, in its words
    qtbot.mouseClick(page.form.button, LEFT)
    qtbot.waitUntil(lambda: "is not a number" in page.form.status.text(), timeout=WAIT_MS)
    assert page.form.status.text().startswith(f"Not saved: {FIELD}: 'twelve' is not a number")
    assert page.form.value.text() == "twelve"  # nothing typed is lost
    assert counts(services.store) == before
    assert services.governance.revisions.show(rig.published_id).revisions == []


def test_a_technician_is_told_which_role_is_needed_and_who_grants_it(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    staff(rig.store)
    page, _services = bench.review_page("tom")
    open_result(qtbot, page, rig.published_id)

    assert page.user.text() == "Signed in as tom (technician role)."
    open_tab(qtbot, page, page.form)
    assert page.form.permission.isVisible() and not page.form.button.isEnabled()
    assert not page.form.value.isEnabled() and not page.form.reason.isEnabled()
    text = page.form.permission.text()
    assert (
        "revising a result needs the reviewer role (or admin); 'tom' has the technician role"
        in text
    )
    assert "An admin (ada) can grant it" in text


def test_a_role_refusal_from_the_service_is_shown_in_words_and_nothing_is_stored(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    staff(rig.store)
    page, services = bench.review_page("rita")
    open_result(qtbot, page, rig.published_id)
    assert page.form.button.isEnabled() and not page.form.permission.isVisible()
    _type_revision(qtbot, page, FIELD, "812.5", "checked against the video")
    # while she types
    as_user(rig.store, "ada").set_role("rita", "technician", "moved to the capture bench")
    before = counts(services.store)

    qtbot.mouseClick(page.form.button, LEFT)

    qtbot.waitUntil(
        lambda: page.form.status.text().startswith(
            "Not saved: revising a result needs the reviewer role"
        ),
        timeout=WAIT_MS,
    )
    assert "'rita' has the technician role" in page.form.status.text()
    # the form follows the service
    qtbot.waitUntil(lambda: not page.form.button.isEnabled(), timeout=WAIT_MS)
    assert page.user.text() == "Signed in as rita (technician role)."
    assert counts(services.store) == before


def test_a_concurrent_revision_is_refused_as_a_conflict_and_the_newer_value_is_shown(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.review_page("rita")
    open_result(qtbot, page, rig.published_id)
    _type_revision(qtbot, page, FIELD, "812.5", "marker 0 occluded")
    bob = rig.services_as("bob").governance.revisions.revise(
        rig.published_id, {FIELD: 790}, "re-measured by hand"
    )
    # pushed through the bridge
    qtbot.waitUntil(lambda: _cells(page, FIELD)[1] == "790.00", timeout=WAIT_MS)
    assert "Revision 1 by bob arrived while you were editing" in page.form.status.text()

    qtbot.mouseClick(page.form.button, LEFT)

    qtbot.waitUntil(lambda: "LABRIG_REVISION_CONFLICT" in page.form.status.text(), timeout=WAIT_MS)
    assert "someone revised this result while you were editing" in page.form.status.text()
    assert _cells(page, FIELD)[1] == "790.00" and "revision 1 by bob" in _cells(page, FIELD)[2]
    assert [r.id for r in services.governance.revisions.show(rig.published_id).revisions] == [
        bob.id
    ]
    # kept
    assert (page.form.value.text(), page.form.reason.text()) == ("812.5", "marker 0 occluded")

    qtbot.mouseClick(page.form.button, LEFT)  # on purpose now: made on bob's revision

    qtbot.waitUntil(lambda: page.form.status.text().startswith("Revision 2 saved"), timeout=WAIT_MS)
    second = services.governance.revisions.show(rig.published_id).revisions[-1]
    assert (second.base_id, second.changes[0].old, second.changes[0].new) == (bob.id, 790.0, 812.5)


def test_the_results_page_shows_a_revised_value_beside_the_automatic_one(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.results_page("rita")
    qtbot.waitUntil(lambda: page.detail.current is not None, timeout=WAIT_MS)
    column = [key for key, _, _ in METRIC_COLUMNS].index("peak_speed")
    automatic = page.detail.metrics.item(0, column).text()
    assert not page.detail.badges["revisedBadge"].isVisible()

    services.governance.revisions.revise(rig.published_id, {FIELD: 812.5}, "marker 0 occluded")

    qtbot.waitUntil(
        lambda: page.detail.metrics.item(0, column).text().startswith("812.50"), timeout=WAIT_MS
    )
    item = page.detail.metrics.item(0, column)
    assert item.text() == f"812.50 (revised; auto {automatic})"
    assert "revision 1 by rita" in item.toolTip() and "marker 0 occluded" in item.toolTip()
    assert page.detail.badges["revisedBadge"].isVisible()
    assert page.detail.badges["revisedBadge"].text() == "REVISED: 1 value"


def test_the_reviewer_sees_the_recording_and_a_correction_redraws_its_track(
    qtbot: QtBot, rig: Rig, bench: Bench
) -> None:
    page, services = bench.review_page("rita")
    open_result(qtbot, page, rig.published_id)
    player = page.player
    # the recording opens at its first frame: the index drawn in the picture on screen is 0
    qtbot.waitUntil(lambda: player.shown_index == 0 and not player.busy, timeout=WAIT_MS)
    assert read_frame_tag(player.shown_frames[0]) == 0 and len(player.views) == 1
    player.seek(9)
    qtbot.waitUntil(lambda: player.shown_index == 9 and not player.busy, timeout=WAIT_MS)
    track = next(o for o in player.views[0].overlays if o.track_id == "2")
    assert track.effective is not None and track.effective.at(9) is not None
    x, y = track.automatic.at(9)
    # a colleague's correction arrives through the bridge: the track is redrawn, the frame kept
    services.governance.revisions.correct(
        rig.published_id, [parse_operation("move", f"2@9={x},{y + 25}")], "mistracked"
    )

    def redrawn() -> bool:
        now = next(o for o in player.views[0].overlays if o.track_id == "2").effective
        return now is not None and now.at(9).tolist() == [x, y + 25]

    qtbot.waitUntil(redrawn, timeout=WAIT_MS)
    assert player.shown_index == 9 and page.history.rowCount() == 1
    assert "moved track 2 at frame 9" in page.history.item(0, 3).text()
