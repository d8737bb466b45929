"""Revisions of real published results: beside the automatic result, with history, event
and audit entry."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import DBAPIError

from labrig.domain.idempotency import sha256_hex
from labrig.errors import LabrigError
from labrig.events import events_after
from labrig.store.models import AnalysisResultRecord, AuditEntry, OutboxEvent, ResultRevision
from tests.integration.review.conftest import Rig


def _automatic(rig: Rig, result_id: str) -> tuple[str, dict[str, Any]]:
    with rig.store.read() as session:
        row = session.get(AnalysisResultRecord, result_id)
        assert row is not None
    return row.digest, json.loads(row.document)


def _counts(rig: Rig) -> tuple[int, ...]:
    with rig.store.read() as session:
        return tuple(
            session.scalar(select(func.count()).select_from(model)) or 0
            for model in (ResultRevision, OutboxEvent, AuditEntry, AnalysisResultRecord)
        )


def test_a_revision_is_stored_beside_the_result_which_stays_byte_identical(rig: Rig) -> None:
    reviews = rig.services.governance.revisions
    before = reviews.automatic_document(rig.published_id)
    digest, document = _automatic(rig, rig.published_id)
    assert sha256_hex(before) == digest
    auto_path = document["metrics"][0]["path_length"]

    first = reviews.revise(
        rig.published_id,
        {"track:0.path_length": "123.5", "track:1.peak_speed": 7},
        "marker 0 was occluded for 10 frames",
    )
    second = reviews.revise(
        rig.published_id[:8],
        {"track:0.path_length": "120"},
        "  re-measured by hand  ",
        base_id=first.id,
    )

    assert (first.number, first.base_id, second.number, second.base_id) == (
        1,
        rig.published_id,
        2,
        first.id,
    )
    assert [(c.field, c.old, c.new) for c in first.changes] == [
        ("track:0.path_length", auto_path, 123.5),
        ("track:1.peak_speed", document["metrics"][1]["peak_speed"], 7.0),
    ]
    # old = the effective value it replaced
    assert [(c.old, c.new) for c in second.changes] == [(123.5, 120.0)]
    assert second.reviewer == "alice" and second.reason == "re-measured by hand"
    assert reviews.automatic_document(rig.published_id) == before  # byte-identical
    shown = reviews.show(rig.published_id)
    assert shown.automatic_intact and shown.automatic_digest == digest
    fields = {f.field: f for f in shown.fields}
    assert (fields["track:0.path_length"].automatic, fields["track:0.path_length"].effective) == (
        auto_path,
        120.0,
    )
    assert (
        fields["track:0.path_length"].revision == 2 and fields["track:1.peak_speed"].revision == 1
    )
    assert fields["track:2.extent"].effective == fields["track:2.extent"].automatic
    assert [r.id for r in shown.revisions] == [first.id, second.id]
    events = [e.payload for e in events_after(rig.store, 0) if e.name == "review.revised"]
    assert events[-1] == {
        "revision_id": second.id,
        "result_id": rig.published_id,
        "reviewer": "alice",
        "reason": "re-measured by hand",
    }
    audit = rig.services.governance.audit.entries(rig.published_id)
    assert [(e.action, e.actor, e.host, e.change["revision_id"]) for e in audit] == [
        ("review.revise", "alice", "bench-1", first.id),
        ("review.revise", "alice", "bench-1", second.id),
    ]
    assert audit[1].change["revision_digest"] == second.digest
    with rig.store.read() as session:
        row = session.get(ResultRevision, second.id)
        assert row is not None and sha256_hex(row.document.encode()) == row.digest
    assert rig.services.governance.audit.verify().intact


BAD: list[tuple[str, Callable[[Rig], tuple[str, dict[str, Any], str, str | None]]]] = [
    (
        "LABRIG_UNKNOWN_RESULT",
        lambda r: ("no-such-result", {"track:0.path_length": 1}, "why", None),
    ),
    (
        "LABRIG_RESULT_NOT_PUBLISHED",
        lambda r: (r.blocked_id, {"track:0.path_length": 1}, "why", None),
    ),
    ("LABRIG_REASON_REQUIRED", lambda r: (r.published_id, {"track:0.path_length": 1}, "   ", None)),
    ("LABRIG_UNKNOWN_FIELD", lambda r: (r.published_id, {"track:7.path_length": 1}, "why", None)),
    ("LABRIG_UNKNOWN_FIELD", lambda r: (r.published_id, {"track:0.reason": 1}, "why", None)),
    ("LABRIG_UNKNOWN_FIELD", lambda r: (r.published_id, {"track:0.track_id": 4}, "why", None)),
    (
        "LABRIG_NOT_A_NUMBER",
        lambda r: (r.published_id, {"track:0.path_length": "12,5"}, "why", None),
    ),
    (
        "LABRIG_NOT_A_NUMBER",
        lambda r: (r.published_id, {"track:0.path_length": "inf"}, "why", None),
    ),
    ("LABRIG_NOT_A_NUMBER", lambda r: (r.published_id, {"track:0.path_length": True}, "why", None)),
    ("LABRIG_FIELD_SYNTAX", lambda r: (r.published_id, {"path_length": 1}, "why", None)),
    ("LABRIG_FIELD_SYNTAX", lambda r: (r.published_id, {}, "why", None)),
    (
        "LABRIG_REVISION_CONFLICT",
        lambda r: (r.published_id, {"track:0.path_length": 1}, "why", "stale"),
    ),
]


@pytest.mark.parametrize(("code", "case"), BAD, ids=[f"{c}-{i}" for i, (c, _) in enumerate(BAD)])
def test_bad_input_is_refused_with_a_code_and_nothing_stored_changes(
    rig: Rig, code: str, case: Callable[[Rig], tuple[str, dict[str, Any], str, str | None]]
) -> None:
    before = _counts(rig)
    result_id, values, reason, base = case(rig)
    with pytest.raises(LabrigError) as info:
        rig.services.governance.revisions.revise(result_id, values, reason, base_id=base)
    assert info.value.code == code, info.value
    assert len(info.value.message) > 30  # says what to do, not just what failed
    assert _counts(rig) == before


def test_a_value_equal_to_the_effective_one_changes_nothing(rig: Rig) -> None:
    reviews = rig.services.governance.revisions
    reviews.revise(rig.published_id, {"track:0.extent": 5}, "fixed")
    before = _counts(rig)
    with pytest.raises(LabrigError) as info:
        reviews.revise(rig.published_id, {"track:0.extent": "5.0"}, "again")
    assert info.value.code == "LABRIG_REVISION_NO_CHANGE" and _counts(rig) == before


def test_the_revision_its_event_and_its_audit_entry_commit_together(rig: Rig) -> None:
    # the database itself refuses the audit entry, as a full disk would refuse its page: the
    # revision and its event were written first in the same transaction
    with rig.store.engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TRIGGER test_audit_fails BEFORE INSERT ON audit_entries "
            "BEGIN SELECT RAISE(ABORT, 'disk full while writing the audit entry'); END"
        )
    before = _counts(rig)
    with pytest.raises(DBAPIError, match="disk full while writing the audit entry"):
        rig.services.governance.revisions.revise(rig.published_id, {"track:0.extent": 5}, "fixed")
    assert _counts(rig) == before  # no revision and no review.revised without its audit entry


def test_results_are_listed_with_their_revisions_and_a_reprocessed_one_says_it_is_superseded(
    rig: Rig,
) -> None:
    from tests.support.results import reprocess_kinematics

    rig.services.governance.revisions.revise(rig.published_id, {"track:0.extent": 5}, "fixed")
    reprocess_kinematics(rig.services, rig.published_id)
    listed = {r.result_id: r for r in rig.services.governance.revisions.results()}
    assert len(listed) == 3
    assert listed[rig.published_id].revisions == 1 and listed[rig.published_id].superseded
    [newer] = [r for r in listed.values() if r.result_id not in (rig.published_id, rig.blocked_id)]
    assert not newer.superseded and newer.revisions == 0
    assert rig.services.governance.revisions.show(rig.published_id).superseded_by == newer.result_id
