"""Reading attempts and their results for the Results screen, on real recordings analysed
through the queue."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sqlalchemy import select

from labrig.bootstrap import Services, bootstrap
from labrig.domain.jobs import JobState
from labrig.results.attempt_list import ResultStatus, count_attempts, list_attempts
from labrig.results.search import AttemptQuery
from labrig.results.views import ADVICE, load_result
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord
from labrig.store.search import Tally
from tests.support.analysis_runs import new_session, record, request_analysis, run_analysis


@pytest.fixture
def services(store: Store) -> Services:
    return bootstrap(store=store)


def _stored_document(services: Services, result_id: str) -> dict[str, object]:
    with services.store.read() as session:
        row = session.get(AnalysisResultRecord, result_id)
        assert row is not None
        return json.loads(row.document)  # type: ignore[no-any-return]


def test_an_attempt_is_pending_until_its_result_is_published_and_then_reads_in_full(
    services: Services,
) -> None:
    session_id = new_session(services, "SUBJ-7")
    attempt_id = request_analysis(services, session_id, record(services, session_id, seconds=1.0))

    [pending] = list_attempts(services.store)
    assert (pending.attempt_id, pending.number, pending.subject_code) == (attempt_id, 1, "SUBJ-7")
    assert (
        pending.status is ResultStatus.PENDING
        and pending.reasons == ()
        and pending.result_id is None
    )
    detail = load_result(services.store, attempt_id)
    assert (
        detail is not None
        and detail.document is None
        and detail.units is None
        and detail.tracks == []
    )
    assert [s.stage_id for s in detail.stages] == ["media.qc", "tracking.markers", "kinematics"]

    run_analysis(services)

    [done] = list_attempts(services.store)
    assert done.status is ResultStatus.DEGRADED and done.result_id is not None
    assert any("no valid calibration" in r for r in done.reasons)
    detail = load_result(services.store, attempt_id)
    assert detail is not None and detail.document == _stored_document(services, done.result_id)
    assert detail.units == ("px", "s") and not detail.previous and detail.advice == []
    series = detail.document["series"]
    assert len(detail.tracks) == len(series) == len(detail.metrics) == 3
    for track, raw in zip(detail.tracks, series, strict=True):
        assert track.track_id == raw["track_id"] and len(track.t) == len(track.x) == len(raw["xy"])
        assert track.speed is not None
        assert track.speed == pytest.approx(np.hypot(*np.asarray(raw["velocity"]).T))


def test_a_reprocess_makes_the_attempt_pending_and_keeps_the_previous_document_on_show(
    services: Services,
) -> None:
    session_id = new_session(services)
    attempt_id = request_analysis(services, session_id, record(services, session_id, seconds=1.0))
    run_analysis(services)
    [first] = list_attempts(services.store)
    kinematics = next(j for j in services.queue.jobs() if j.stage_id == "kinematics")

    services.queue.reprocess(kinematics.id)

    [reprocessing] = list_attempts(services.store)
    assert reprocessing.status is ResultStatus.PENDING and reprocessing.result_id == first.result_id
    detail = load_result(services.store, attempt_id)
    assert (
        detail is not None
        and detail.previous
        and detail.document is not None
        and len(detail.tracks) == 3
    )

    run_analysis(services)

    [again] = list_attempts(services.store)
    assert again.status is ResultStatus.DEGRADED and again.result_id not in (None, first.result_id)
    detail = load_result(services.store, attempt_id)
    assert detail is not None and not detail.previous


def test_a_cancelled_stage_blocks_the_attempt_before_the_publisher_writes(
    services: Services,
) -> None:
    session_id = new_session(services)
    attempt_id = request_analysis(services, session_id, record(services, session_id, seconds=0.5))
    qc = next(j for j in services.queue.jobs() if j.stage_id == "media.qc")

    services.queue.cancel(qc.id)

    with services.store.read() as session:
        assert session.scalars(select(AnalysisResultRecord)).all() == []
    [blocked] = list_attempts(services.store)
    assert blocked.status is ResultStatus.BLOCKED
    assert blocked.reasons[0] == "media.qc: cancelled by an operator"
    assert [r.split(":")[0] for r in blocked.reasons] == [
        "media.qc",
        "tracking.markers",
        "kinematics",
    ]
    detail = load_result(services.store, attempt_id)
    assert detail is not None and detail.document is None
    assert detail.stages[0].state == JobState.CANCELLED.value
    assert detail.advice[0] == ADVICE["LABRIG_CANCELLED"]


def test_a_blocked_result_reads_with_its_reasons_and_advice(services: Services) -> None:
    session_id = new_session(services)
    attempt_id = request_analysis(
        services, session_id, record(services, session_id, scene="plane", seconds=0.5)
    )
    run_analysis(services)

    [blocked] = list_attempts(services.store)
    assert blocked.status is ResultStatus.BLOCKED and blocked.result_id is not None
    assert blocked.reasons[0].startswith("tracking.markers: no markers were found in any of the")
    detail = load_result(services.store, attempt_id)
    assert (
        detail is not None and detail.units is None and detail.tracks == [] and detail.metrics == []
    )
    assert detail.advice == [ADVICE["LABRIG_TOO_FEW_MARKERS"]]


def test_attempts_are_listed_newest_first_and_an_unknown_one_reads_as_none(
    services: Services,
) -> None:
    session_id = new_session(services)
    capture_id = record(services, session_id, seconds=0.3)
    first = request_analysis(services, session_id, capture_id)
    second = request_analysis(services, session_id, capture_id)

    assert [a.attempt_id for a in list_attempts(services.store)] == [second, first]
    assert [a.number for a in list_attempts(services.store)] == [2, 1]
    assert [a.attempt_id for a in list_attempts(services.store, AttemptQuery(limit=1))] == [second]
    older = AttemptQuery(limit=1, offset=1)
    assert [a.attempt_id for a in list_attempts(services.store, older)] == [first]
    assert count_attempts(services.store, older) == Tally(2)
    assert load_result(services.store, "no-such-attempt") is None
