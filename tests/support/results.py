"""Real analysis results for review tests: recorded from the virtual camera, analysed
through the queue.

Recording is paced (one second of video takes one second), so tests build one
template store and copy it (:func:`copy_store`) instead of recording per test.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select

from labrig.bootstrap import Services, bootstrap
from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.recorder import Recorder
from labrig.capture.sessions import PipelineStep, create_attempt, create_session
from labrig.capture.sink import SteadyClock
from labrig.capture.sources import Mode
from labrig.capture.virtual import VirtualCamera
from labrig.jobs.executor import ThreadExecutor
from labrig.pipeline.attempts import attempt_pipeline
from labrig.store.models import AnalysisResultRecord, Job

DEVICE = DeviceInfo("virtual:markers", DeviceKind.VIRTUAL, "Labrig virtual camera", "markers")
MODE = Mode(640, 480, 30.0)


@dataclass(frozen=True)
class TemplateResults:
    published_id: str  # a published (degraded: no calibration, so in px) result with three tracks
    blocked_id: str  # a blocked result (no markers in the scene)


def _attempt(services: Services, session_id: str, *, blocked: bool = False) -> str:
    # each frame carries its index in its corner: the player tests read which frame is shown
    camera = VirtualCamera("markers", frames_limit=30, tag_frames=True)
    # stamped 1/30 s apart, however busy the machine (labrig.capture.sink.SteadyClock)
    recorder = Recorder(
        services.store, camera, DEVICE, MODE, session_id=session_id, clock=SteadyClock(MODE.fps)
    )
    recorder.start()
    recorder.wait(60)
    capture_id = recorder.stop().capture_id
    pipeline = attempt_pipeline(services.store, capture_id)
    # markers of a hue none of the scene's has: too few markers, so the gate blocks the result
    if blocked:
        pipeline = [
            PipelineStep("media.qc", {}),
            PipelineStep("tracking.markers", {"marker_hue": [200, 210]}, after_previous=True),
            PipelineStep("kinematics", {}, after_previous=True),
        ]
    return create_attempt(services.queue, session_id, [capture_id], pipeline)


def analyse(services: Services) -> None:
    """Run every queued job, then let the publisher write the results."""
    ThreadExecutor(services.queue, workers=2).run(drain=True)
    services.dispatcher.dispatch_once()


def make_results(root: Path) -> TemplateResults:
    """A store at ``root`` holding one published and one blocked result."""
    services = bootstrap(root)
    try:
        session_id = create_session(services.queue, "REVIEW-1", "reach", "ana")
        published_attempt = _attempt(services, session_id)
        blocked_attempt = _attempt(services, session_id, blocked=True)
        analyse(services)
        with services.store.read() as session:
            rows = {r.attempt_id: r for r in session.scalars(select(AnalysisResultRecord))}
        published, blocked = rows[published_attempt], rows[blocked_attempt]
        assert (
            published.status == "published" and len(json.loads(published.document)["metrics"]) == 3
        )
        assert blocked.status == "blocked"
        return TemplateResults(published.id, blocked.id)
    finally:
        services.close()


def copy_store(template: Path, target: Path) -> Path:
    shutil.copytree(template, target)
    return target


def reprocess_kinematics(services: Services, result_id: str) -> None:
    """Reprocess the newest kinematics job of the result's attempt and publish again (a
    new result row)."""
    with services.store.read() as session:
        result = session.get(AnalysisResultRecord, result_id)
        assert result is not None
        job = session.scalars(
            select(Job)
            .where(Job.attempt_id == result.attempt_id, Job.stage_id == "kinematics")
            .order_by(Job.created_at.desc())
        ).first()
        assert job is not None
    services.queue.reprocess(job.id)
    analyse(services)
