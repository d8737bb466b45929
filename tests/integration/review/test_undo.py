"""Undoing a revision of a real published result by a new one: its corrections (or values) stop
counting, exactly as if never made, nothing is deleted, the automatic document stays
byte-identical, a sign-off is cleared; refusals store nothing."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, select

from labrig.domain.corrections import parse_operation
from labrig.errors import LabrigError
from labrig.store.models import AuditEntry, OutboxEvent, ResultRevision
from tests.integration.review.conftest import Rig


def counts(rig: Rig) -> tuple[int, ...]:
    with rig.store.read() as session:
        return tuple(
            session.scalar(select(func.count()).select_from(model)) or 0
            for model in (ResultRevision, OutboxEvent, AuditEntry)
        )


def test_an_undone_hide_gives_the_tracks_back_as_they_were(rig: Rig) -> None:
    reviews = rig.services.governance.revisions
    automatic = reviews.automatic_document(rig.published_id)
    source, before = reviews.effective(rig.published_id)
    fields_before = reviews.show(rig.published_id).fields
    hidden = reviews.correct(rig.published_id, [parse_operation("occlude", "0@5-20")], "hand")
    moved = reviews.correct(rig.published_id, [parse_operation("move", "1@12=100,100")], "jump")
    signed = reviews.sign_off(rig.published_id, "approved")
    assert signed.sign_off is not None
    _, corrected = reviews.effective(rig.published_id)
    assert corrected.tracks["0"].at(10) is None

    undo = reviews.undo(rig.published_id, hidden.number, "the hand was not over it")
    assert (undo.undoes, undo.changes, undo.operations) == (hidden.number, [], [])
    _, after = reviews.effective(rig.published_id)
    # track 0 is the automatic one again; track 1 keeps the move that was not undone
    np.testing.assert_array_equal(after.tracks["0"].xy, before.tracks["0"].xy)
    np.testing.assert_array_equal(after.tracks["1"].at(12), [100.0, 100.0])
    shown = reviews.show(rig.published_id)
    assert [r.number for r in shown.revisions] == [1, 2, 3, 4]  # nothing deleted
    assert shown.sign_off is not None and shown.sign_off.cleared_by == undo.number
    assert reviews.automatic_document(rig.published_id) == automatic
    entry = rig.services.governance.audit.entries(rig.published_id)[-1]
    assert (entry.action, entry.change["undoes"]) == ("review.undo", hidden.number)

    # undoing the move too: every value is the automatic one again
    reviews.undo(rig.published_id, moved.number, "the tracker was right")
    fields = {f.field: f for f in reviews.show(rig.published_id).fields}
    assert {k: (f.automatic, f.effective) for k, f in fields.items()} == {
        f.field: (f.automatic, f.effective) for f in fields_before
    }
    assert all(f.revision is None for f in fields.values())
    assert source.tracks.keys() == after.tracks.keys()


def test_an_undone_value_stops_counting(rig: Rig) -> None:
    reviews = rig.services.governance.revisions
    field = "track:0.peak_speed"
    automatic = next(f for f in reviews.show(rig.published_id).fields if f.field == field)
    revised = reviews.revise(rig.published_id, {field: 812.5}, "read off the video")
    reviews.undo(rig.published_id, revised.number, "the automatic value was right")
    now = next(f for f in reviews.show(rig.published_id).fields if f.field == field)
    assert (now.effective, now.revision) == (automatic.effective, None)


def test_refused_undos_store_nothing(rig: Rig) -> None:
    reviews = rig.services.governance.revisions
    hide = reviews.correct(rig.published_id, [parse_operation("occlude", "0@10-17")], "hand")
    fill = reviews.correct(rig.published_id, [parse_operation("fill", "0@10-17:spline")], "fill")
    signed = reviews.sign_off(rig.published_id, "reviewed")
    before = counts(rig)
    for number, code, said in (
        (9, "LABRIG_UNKNOWN_REVISION", "has no revision 9"),
        (signed.number, "LABRIG_UNDO_REFUSED", "is a sign-off"),
        # the fill needs the gap the hide made
        (hide.number, "LABRIG_UNDO_REFUSED", "Undo that one first"),
    ):
        with pytest.raises(LabrigError) as refused:
            reviews.undo(rig.published_id, number, "why")
        assert refused.value.code == code and said in refused.value.message, refused.value.message
    with pytest.raises(LabrigError) as stale:
        reviews.undo(rig.published_id, fill.number, "why", base_id=hide.id)
    assert stale.value.code == "LABRIG_REVISION_CONFLICT"
    assert counts(rig) == before
    # the fill first, then the hide: both undone
    undo_fill = reviews.undo(rig.published_id, fill.number, "no fill")
    reviews.undo(rig.published_id, hide.number, "no hide")
    with pytest.raises(LabrigError) as twice:
        reviews.undo(rig.published_id, fill.number, "again")
    assert twice.value.code == "LABRIG_UNDO_REFUSED" and "undone already" in twice.value.message
    with pytest.raises(LabrigError) as of_undo:
        reviews.undo(rig.published_id, undo_fill.number, "redo")
    assert of_undo.value.code == "LABRIG_UNDO_REFUSED"
