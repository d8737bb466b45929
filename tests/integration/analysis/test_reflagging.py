"""A result made under a calibration that changed since is flagged with the reason, in the reads
the Results screen and `labrig review list` show, and is reprocessed under the current calibration
in one action, as a new attempt of the same recordings: the old result stays byte for byte."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from labrig.bootstrap import Services, bootstrap
from labrig.calibration.camera import CalibrationThresholds
from labrig.capture import create_attempt, create_session
from labrig.capture.rigs import DeviceSpec
from labrig.capture.sources import Mode
from labrig.pipeline import NothingToReanalyseError, reanalyse, save_rig_attempt
from labrig.results import list_attempts, load_result
from labrig.store import Store, utcnow
from labrig.store.models import Attempt
from tests.integration.recording.test_rig_recording import record_frames
from tests.support.analysis_runs import (
    analyse,
    calibrate_markers_camera,
    new_session,
    newest_result,
    record,
    run_analysis,
)
from tests.support.rig_truth import store_truth_calibration


@pytest.fixture
def services(store: Store) -> Services:
    return bootstrap(store=store)


def summary_of(store: Store, attempt_id: str) -> Any:
    return next(a for a in list_attempts(store) if a.attempt_id == attempt_id)


def test_a_superseded_calibration_flags_its_results_and_reprocessing_uses_the_new_one(
    services: Services,
) -> None:
    first = calibrate_markers_camera(services)
    session_id = new_session(services)
    attempt_id = analyse(services, session_id, record(services, session_id))
    old = newest_result(services.store, attempt_id)
    assert json.loads(old.document)["provenance"]["calibration_id"] == first.id
    assert summary_of(services.store, attempt_id).flags == ()

    # a new calibration of the same device and mode, stored later
    second = calibrate_markers_camera(
        services,
        thresholds=CalibrationThresholds(max_rms_px=0.9),
        now=utcnow() + timedelta(minutes=1),
    )
    assert second.id != first.id and second.valid
    [flag] = summary_of(services.store, attempt_id).flags
    assert flag.calibration_id == first.id and flag.current_id == second.id
    assert f"superseded by calibration {second.id[:8]}" in flag.reason
    detail = load_result(services.store, attempt_id)
    assert detail is not None and detail.summary.flags == (flag,)
    [listed] = [r for r in services.governance.revisions.results() if r.result_id == old.id]
    assert listed.flags == (flag.reason,)

    done = services.governance.reprocess.reprocess(old.id[:8])
    assert done.from_attempt_id == attempt_id and done.attempt_id != attempt_id
    run_analysis(services)
    again = newest_result(services.store, done.attempt_id)
    assert json.loads(again.document)["provenance"]["calibration_id"] == second.id
    assert again.status == "published" and summary_of(services.store, done.attempt_id).flags == ()
    with services.store.read() as s:
        note = s.get(Attempt, done.attempt_id).note  # type: ignore[union-attr]
    assert f"Re-analysis of attempt 1 ({attempt_id})" in (note or "")
    # the earlier result is untouched, and still says why it is flagged
    kept = newest_result(services.store, attempt_id)
    assert (kept.id, kept.digest, kept.document) == (old.id, old.digest, old.document)
    assert summary_of(services.store, attempt_id).flags == (flag,)
    # and it says it was analysed again, as which attempt
    shown = load_result(services.store, attempt_id)
    assert shown is not None and shown.reanalysed_as == (2,)
    assert load_result(services.store, done.attempt_id).reanalysed_as == ()  # type: ignore[union-attr]


def test_a_rig_whose_cameras_changed_flags_its_3d_results_until_reprocessed(
    services: Services,
) -> None:
    mode = Mode(1280, 720, 30.0, "any")
    specs = [DeviceSpec(f"virtual:rig-{n}", mode) for n in (1, 2, 3, 4)]
    rig = services.capture.add_rig("lab", specs)
    truth = store_truth_calibration(services.store, rig)
    session = create_session(services.queue, "RIG-F", "gait", "ana")
    recording = services.capture.start_rig_recording("lab", session)
    record_frames(recording, 45)
    attempt_id = save_rig_attempt(services.queue, recording.stop())
    run_analysis(services)
    old = newest_result(services.store, attempt_id)
    assert old.status == "published", old.reasons
    assert summary_of(services.store, attempt_id).flags == ()

    # the rig loses a camera: its calibration no longer holds, and none is current yet
    services.capture.remove_rig("lab")
    smaller = services.capture.add_rig("lab", specs[:3])
    [flag] = summary_of(services.store, attempt_id).flags
    assert flag.calibration_id == truth and flag.current_id is None
    assert "rig lab's cameras changed" in flag.reason and "calibrate the rig again" in flag.reason

    # calibrated again as it is now: the flag names the calibration to reprocess under
    current = store_truth_calibration(services.store, smaller, [0, 1, 2])
    [flag] = summary_of(services.store, attempt_id).flags
    assert flag.current_id == current and f"rig calibration {current[:8]} is current" in flag.reason
    done = services.governance.reprocess.reprocess(old.id)
    run_analysis(services)
    again = json.loads(newest_result(services.store, done.attempt_id).document)
    assert again["status"] == "published", again["reasons"]
    assert again["provenance"]["rig_calibration_id"] == current
    assert again["reconstruction"]["cameras"] == ["front", "right", "back"]
    assert newest_result(services.store, attempt_id).digest == old.digest


def test_an_attempt_never_analysed_is_not_reprocessed_and_nothing_is_stored(
    services: Services,
) -> None:
    session = create_session(services.queue, "RIG-N", "calibration", "ana")
    kept = create_attempt(services.queue, session, [record(services, session)])  # no pipeline
    with services.store.read() as s:
        before = s.scalar(select(func.count()).select_from(Attempt))
    with pytest.raises(NothingToReanalyseError, match="never analysed"):
        reanalyse(services.queue, kept)
    with services.store.read() as s:
        assert s.scalar(select(func.count()).select_from(Attempt)) == before
