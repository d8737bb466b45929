"""Corrections of a real published result's tracked data (30 frames of the virtual camera's markers
scene, tracked and analysed through the queue): stored as revisions beside the automatic result,
which stays byte-identical; the effective tracks and kinematics recomputed from them; a gap
filled by spline against the scene's truth; refusals and stale views storing nothing."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from sqlalchemy import func, select

from labrig.capture.sources import Mode
from labrig.capture.virtual import VirtualCamera
from labrig.domain.corrections import parse_operation
from labrig.domain.idempotency import sha256_hex
from labrig.errors import LabrigError
from labrig.store.dialects import drop_append_only_ddl
from labrig.store.models import AuditEntry, OutboxEvent, ResultRevision
from tests.integration.review.conftest import Rig

MODE = Mode(640, 480, 30.0)  # the template's recordings (tests/support/results.py)


def counts(rig: Rig) -> tuple[int, ...]:
    with rig.store.read() as session:
        return tuple(
            session.scalar(select(func.count()).select_from(model)) or 0
            for model in (ResultRevision, OutboxEvent, AuditEntry)
        )


def truth_px(frame: int) -> np.ndarray:
    """The scene's markers at ``frame``, in picture px (M×2)."""
    camera = VirtualCamera("markers")
    camera.open(MODE)
    return np.array([m["image_px"] for m in camera.truth(frame)["markers"]])


def test_a_gap_hidden_then_filled_by_spline_lies_on_the_scenes_truth(rig: Rig) -> None:
    reviews = rig.services.governance.revisions
    automatic = reviews.automatic_document(rig.published_id)
    source, _ = reviews.effective(rig.published_id)
    track = source.tracks["0"]
    assert len(track.frames) == 30
    # the scene's marker this track follows
    marker = int(np.argmin(np.linalg.norm(truth_px(5) - track.at(5), axis=1)))
    gap = range(10, 18)
    reviews.correct(rig.published_id, [parse_operation("occlude", "0@10-17")], "hidden by a hand")
    _, hidden = reviews.effective(rig.published_id)
    assert [f for f in gap if hidden.tracks["0"].at(f) is not None] == []
    errors = {}
    for n, method in enumerate(("linear", "spline")):
        if n:  # undo the linear fill by hiding the range again, then fill it by spline
            reviews.correct(rig.published_id, [parse_operation("occlude", "0@10-17")], "again")
        reviews.correct(
            rig.published_id, [parse_operation("fill", f"0@10-17:{method}")], f"{method} fill"
        )
        _, filled = reviews.effective(rig.published_id)
        t = filled.tracks["0"]
        assert t.filled == frozenset(gap)
        got = np.array([t.at(f) for f in gap])
        want = np.array([truth_px(f)[marker] for f in gap])
        errors[method] = float(np.sqrt(((got - want) ** 2).sum(axis=1).mean()))
        doc = next(k for k in filled.kinematics if str(k["track_id"]) == "0")
        assert doc["filled_frames"] == list(gap)
    print(
        f"fill of 8 frames against the truth: linear {errors['linear']:.2f} px, "
        f"spline {errors['spline']:.2f} px"
    )
    # measured: linear 1.96 px (a straight chord cuts the marker's curve), spline 0.05 px (the
    # tracker's own positions are that close to the truth)
    assert errors["spline"] < 0.2 and errors["linear"] > 1.0, errors
    assert reviews.automatic_document(rig.published_id) == automatic
    shown = reviews.show(rig.published_id)
    assert [len(r.operations) for r in shown.revisions] == [1, 1, 1, 1]
    assert shown.automatic_intact and sha256_hex(automatic) == shown.automatic_digest


def test_a_moved_marker_changes_that_track_at_that_frame_and_its_values(rig: Rig) -> None:
    reviews = rig.services.governance.revisions
    source, before = reviews.effective(rig.published_id)
    x, y = source.tracks["1"].at(12)
    revision = reviews.correct(
        rig.published_id, [parse_operation("move", f"1@12={x + 30},{y}")], "mistracked at 12"
    )
    _, after = reviews.effective(rig.published_id)
    for name in ("0", "2"):
        np.testing.assert_array_equal(after.tracks[name].xy, before.tracks[name].xy)
    moved = np.nonzero(np.any(after.tracks["1"].xy != before.tracks["1"].xy, axis=1))[0]
    assert after.tracks["1"].frames[moved].tolist() == [12]
    fields = {f.field: f for f in reviews.show(rig.published_id).fields}
    path = fields["track:1.path_length"]
    # out and back 30 px, smoothed by the kinematics' filter: longer, by less than 60 px
    assert path.automatic is not None and path.effective is not None
    assert 5.0 < path.effective - path.automatic < 60.0
    assert path.revision == revision.number
    assert fields["track:0.path_length"].effective == fields["track:0.path_length"].automatic
    assert fields["track:0.path_length"].revision is None


def test_a_correction_that_does_not_apply_or_a_stale_view_stores_nothing(rig: Rig) -> None:
    reviews = rig.services.governance.revisions
    first = reviews.correct(rig.published_id, [parse_operation("trim", "2-27")], "settling")
    before = counts(rig)
    refusals = [
        ([parse_operation("fill", "0@5-9")], None, "LABRIG_CORRECTION_REFUSED"),  # no gap there
        ([parse_operation("move", "9@5=1,1")], None, "LABRIG_CORRECTION_REFUSED"),  # no track 9
        # trimmed away by the first correction: nothing left to hide
        ([parse_operation("occlude", "0@0-1")], None, "LABRIG_CORRECTION_REFUSED"),
        ([parse_operation("occlude", "0@5-6")], rig.published_id, "LABRIG_REVISION_CONFLICT"),
        ([], None, "LABRIG_CORRECTION_SYNTAX"),
    ]
    for operations, base, code in refusals:
        with pytest.raises(LabrigError) as refused:
            reviews.correct(rig.published_id, operations, "why", base_id=base)
        assert refused.value.code == code, refused.value.message
    assert counts(rig) == before
    with pytest.raises(LabrigError) as blocked:
        reviews.correct(rig.blocked_id, [parse_operation("trim", "2-27")], "why")
    assert blocked.value.code == "LABRIG_RESULT_NOT_PUBLISHED"
    # on the current view it is taken
    reviews.correct(rig.published_id, [parse_operation("occlude", "0@5-6")], "ok", base_id=first.id)
    assert counts(rig)[0] == before[0] + 1


def test_a_result_whose_stored_document_no_longer_matches_its_digest_is_not_revised(
    rig: Rig,
) -> None:
    with sqlite3.connect(rig.store.db_path) as conn:
        for statement in drop_append_only_ddl("sqlite", ["analysis_results"]):
            conn.execute(statement)
        conn.execute(
            "UPDATE analysis_results SET document = replace(document, 'published', 'publishec') "
            "WHERE id = ?",
            (rig.published_id,),
        )
    before = counts(rig)
    reviews = rig.services.governance.revisions
    for attempt in (
        lambda: reviews.correct(rig.published_id, [parse_operation("trim", "2-27")], "why"),
        lambda: reviews.revise(rig.published_id, {"track:0.path_length": "1"}, "why"),
    ):
        with pytest.raises(LabrigError) as refused:
            attempt()
        assert refused.value.code == "LABRIG_DB_CORRUPT", refused.value.code
    assert counts(rig) == before
