"""The default pipeline end to end: record → attempt → media.qc → tracking → kinematics →
published result.

Calibration truly gates metric output: without one the result is in pixels (and seconds, from the
recorded timestamps) and says it is degraded; with one (intrinsics from board views, scale from the
board lying on the plane) it is in millimetres and seconds and matches the virtual camera's ground
truth.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sqlalchemy import select

from labrig.bootstrap import Services, bootstrap
from labrig.calibration import plane_homography
from labrig.calibration.boards import parse_board
from labrig.calibration.camera import View, calibrate_views, detect_views
from labrig.calibration.stored import save_calibration
from labrig.capture.recorder import Recorder
from labrig.capture.sessions import PipelineStep, create_attempt, create_session
from labrig.capture.sink import SteadyClock
from labrig.capture.sources import Mode
from labrig.capture.virtual import VirtualCamera
from labrig.domain.jobs import JobState
from labrig.errors import StageConfigError
from labrig.events import events_after
from labrig.jobs.executor import ThreadExecutor
from labrig.pipeline.attempts import attempt_pipeline
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord, Attempt
from tests.integration.recording.conftest import VIRTUAL

MODE = Mode(1280, 720, 30.0)


def _record(
    services: Services, session_id: str, scene: str = "markers", seconds: float = 2.0
) -> str:
    # paced, and stamped 1/30 s apart as the scene's own time is, on a steady clock: a busy machine
    # that keeps the grab thread waiting neither drops frames nor stretches time here
    # (labrig.capture.sink.SteadyClock)
    camera = VirtualCamera(scene, frames_limit=int(seconds * 30))  # type: ignore[arg-type]
    recorder = Recorder(
        services.store, camera, VIRTUAL, MODE, session_id=session_id, clock=SteadyClock(MODE.fps)
    )
    recorder.start()
    recorder.wait(60)
    return recorder.stop().capture_id


def _analyse(services: Services, session_id: str, capture_id: str) -> dict[str, object]:
    attempt_id = create_attempt(
        services.queue, session_id, [capture_id], attempt_pipeline(services.store, capture_id)
    )
    ThreadExecutor(services.queue, workers=2).run(drain=True)
    services.dispatcher.dispatch_once()
    with services.store.read() as s:
        row = s.scalars(
            select(AnalysisResultRecord).where(AnalysisResultRecord.attempt_id == attempt_id)
        ).one()
    return json.loads(row.document)  # type: ignore[no-any-return]


def _calibrate(services: Services) -> None:
    board = parse_board("chessboard:9x6:25")
    camera = VirtualCamera("board", noise=1.0)
    camera.open(MODE)
    views = [View(f"board-{i}", camera.render(i)) for i in range(0, 600, 30)]
    result = calibrate_views(views, board)
    assert result.valid, result.reasons
    plane = VirtualCamera("plane", noise=1.0)
    plane.open(MODE)
    [detection], _, _ = detect_views([View("plane", plane.render(0))], board)
    save_calibration(
        services.store,
        result,
        VIRTUAL.device_id,
        MODE.label(),
        plane_homography=plane_homography(result, detection, board),
    )


@pytest.fixture
def services(store: Store) -> Services:
    return bootstrap(store=store)


def test_without_calibration_the_result_is_in_pixels_and_says_so(services: Services) -> None:
    session_id = create_session(services.queue, "S-1", "reach", "ana")
    result = _analyse(services, session_id, _record(services, session_id))
    assert result["status"] == "published" and result["degraded"] is True
    # the frame times are recorded: seconds, though the lengths stay pixels
    assert result["units"] == {"length": "px", "time": "s"}
    # a 2 s recording: times in seconds, not frame numbers up to 59
    assert all(0 < m["time_to_peak_speed"] < 2.0 for m in result["metrics"])  # type: ignore[attr-defined, union-attr]
    assert any("no valid calibration" in r for r in result["reasons"])  # type: ignore[union-attr]
    assert len(result["metrics"]) == 3  # type: ignore[arg-type]
    names = [e.name for e in events_after(services.store, 0)]
    assert "quality.degraded" in names and names.count("result.published") == 1
    jobs = services.queue.jobs()
    assert [j.stage_id for j in jobs] == ["media.qc", "tracking.markers", "kinematics"]
    assert {j.state for j in jobs} == {JobState.SUCCEEDED, JobState.SUCCEEDED_DEGRADED}


def test_with_a_valid_calibration_the_result_is_metric_and_matches_the_truth(
    services: Services,
) -> None:
    _calibrate(services)
    session_id = create_session(services.queue, "S-2", "reach", "ana")
    result = _analyse(services, session_id, _record(services, session_id))
    assert result["status"] == "published" and result["degraded"] is False, result["reasons"]
    assert result["units"] == {"length": "mm", "time": "s"}
    assert result["provenance"]["calibration_id"]  # type: ignore[index]
    truth = VirtualCamera("markers")
    truth.open(MODE)
    true_paths = []
    for marker in range(3):
        pts = np.array([truth.truth(i)["markers"][marker]["plane_mm"] for i in range(60)])
        true_paths.append(float(np.sum(np.hypot(*np.diff(pts, axis=0).T))))
    measured = sorted(m["path_length"] for m in result["metrics"])  # type: ignore[union-attr]
    for got, want in zip(measured, sorted(true_paths), strict=True):
        assert got == pytest.approx(want, rel=0.03)


def test_a_recording_without_markers_is_blocked_with_its_reason(services: Services) -> None:
    session_id = create_session(services.queue, "S-3", "reach", "ana")
    result = _analyse(
        services, session_id, _record(services, session_id, scene="plane", seconds=1.0)
    )
    assert result["status"] == "blocked"
    assert any("no markers were found in any of the 30 frames" in r for r in result["reasons"]), (
        result["reasons"]
    )
    names = [e.name for e in events_after(services.store, 0)]
    assert "quality.blocked" in names and "result.published" not in names


def test_markers_of_one_colour_are_tracked_when_the_attempt_asks_for_a_hue(
    services: Services,
) -> None:
    session_id = create_session(services.queue, "S-4", "reach", "ana")
    capture_id = _record(services, session_id, seconds=1.0)
    pipeline = [
        PipelineStep("media.qc", {}),
        # the yellow one
        PipelineStep("tracking.markers", {"marker_hue": [40, 65]}, after_previous=True),
        PipelineStep("kinematics", {}, after_previous=True),
    ]
    create_attempt(services.queue, session_id, [capture_id], pipeline)
    ThreadExecutor(services.queue, workers=2).run(drain=True)
    services.dispatcher.dispatch_once()
    with services.store.read() as s:
        row = s.scalars(select(AnalysisResultRecord)).one()
    result = json.loads(row.document)
    assert result["status"] == "published"
    assert len(result["metrics"]) == 1  # of three bright markers, one has that hue


def test_an_attempt_with_a_setting_its_stage_does_not_take_is_refused_and_nothing_is_stored(
    services: Services,
) -> None:
    session_id = create_session(services.queue, "S-5", "reach", "ana")
    capture_id = _record(services, session_id, seconds=0.5)
    before = services.queue.jobs()
    for config, words in (
        ({"marker_hue": [400, 20]}, "two angles of 0-360"),
        ({"min_marker_fraction": "most"}, "must be float"),
        ({"expected_markes": 3}, "has no setting 'expected_markes'"),
    ):
        with pytest.raises(StageConfigError, match=words) as caught:
            create_attempt(
                services.queue, session_id, [capture_id], [PipelineStep("tracking.markers", config)]
            )
        assert caught.value.code == "LABRIG_STAGE_CONFIG"
    assert services.queue.jobs() == before
    with services.store.read() as s:
        assert s.scalars(select(Attempt)).all() == []


def test_an_attempt_of_two_captures_says_which_one_was_analysed(services: Services) -> None:
    session_id = create_session(services.queue, "S-6", "reach", "ana")
    first, second = (
        _record(services, session_id, seconds=1.0),
        _record(services, session_id, seconds=1.0),
    )
    create_attempt(
        services.queue, session_id, [first, second], attempt_pipeline(services.store, first)
    )
    ThreadExecutor(services.queue, workers=2).run(drain=True)
    services.dispatcher.dispatch_once()
    with services.store.read() as s:
        result = json.loads(s.scalars(select(AnalysisResultRecord)).one().document)
    assert result["status"] == "published" and result["degraded"] is True
    assert any(
        f"has 2 captures; the default pipeline analysed the first ({first}) only" in r
        for r in result["reasons"]
    ), result["reasons"]
