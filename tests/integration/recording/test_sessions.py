"""Sessions and attempts: committed captures only; the attempt and its analysis jobs
commit together."""

from __future__ import annotations

import pytest

from labrig.bootstrap import bootstrap
from labrig.capture.recorder import Recorder
from labrig.capture.sessions import (
    CaptureNotUsableError,
    InvalidFieldError,
    PipelineStep,
    create_attempt,
    create_session,
)
from labrig.capture.virtual import VirtualCamera
from labrig.domain.jobs import JobState
from labrig.events import events_after
from labrig.store import Store
from tests.integration.recording.conftest import SMALL, VIRTUAL, wait_for_frames


def _record(store: Store, session_id: str) -> str:
    recorder = Recorder(store, VirtualCamera("markers"), VIRTUAL, SMALL, session_id=session_id)
    recorder.start()
    wait_for_frames(recorder, 9)  # 0.3 s of the camera
    return recorder.stop().capture_id


def test_an_attempt_of_committed_captures_requests_its_analysis(store: Store) -> None:
    queue = bootstrap(store=store).queue
    session_id = create_session(queue, "S-014", "gait 10 m", "ana")
    capture_id = _record(store, session_id)
    pipeline = [
        PipelineStep("labrig.selftest", {"steps": 1}),
        PipelineStep("labrig.selftest", {"steps": 2}, after_previous=True),
    ]
    attempt_id = create_attempt(queue, session_id, [capture_id], pipeline)
    created = [e.payload for e in events_after(store, 0) if e.name == "attempt.created"]
    assert created == [
        {"attempt_id": attempt_id, "session_id": session_id, "capture_ids": [capture_id]}
    ]
    jobs = queue.jobs()
    assert [j.attempt_id for j in jobs] == [attempt_id, attempt_id]
    assert [j.state for j in jobs] == [JobState.READY, JobState.INPUTS_PENDING]
    assert len(jobs[0].input_digests) == 1  # the capture's committed manifest digest
    second = create_attempt(queue, session_id, [capture_id])
    assert second != attempt_id


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("subject", ""),
        ("subject", "../etc"),
        ("protocol", "x" * 200),
        ("operator", " "),
        ("subject", "a/../b"),
    ],
)
def test_bad_form_fields_are_refused_with_a_code(store: Store, field: str, value: str) -> None:
    queue = bootstrap(store=store).queue
    args = {"subject": "S-1", "protocol": "p", "operator": "o"} | {field: value}
    with pytest.raises(InvalidFieldError) as info:
        create_session(queue, args["subject"], args["protocol"], args["operator"])
    assert info.value.code == "LABRIG_INVALID_FIELD"


def test_an_attempt_refuses_uncommitted_or_unknown_captures_and_leaves_nothing(
    store: Store,
) -> None:
    queue = bootstrap(store=store).queue
    session_id = create_session(queue, "S-2", "p", "o")
    for bad in ([], ["no-such-capture"]):
        with pytest.raises(CaptureNotUsableError):
            create_attempt(queue, session_id, bad, [PipelineStep("labrig.selftest", {})])
    assert queue.jobs() == [] and not [
        e for e in events_after(store, 0) if e.name == "attempt.created"
    ]
