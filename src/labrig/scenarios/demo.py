"""``labrig demo``: the whole product headless on the virtual camera.

Verify the device, calibrate it from a recording of the board (intrinsics) and a
recording of the board lying on the measurement plane (scale), record N attempts
of moving markers, analyse them through the queue, and publish the results.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from labrig.calibration import (
    CaptureSource,
    calibrate_views,
    detect_views,
    load_views,
    parse_board,
    plane_homography,
    save_calibration,
    still_plane_view,
)
from labrig.capture import (
    DEFAULT_MODE,
    MARKERS_DEVICE_ID,
    SCENE_PURPOSE,
    DeviceInfo,
    DeviceRefusedError,
    Recorder,
    SceneName,
    VirtualCamera,
    create_session,
    load_capture,
)
from labrig.jobs import ThreadExecutor
from labrig.pipeline import save_attempt
from labrig.store.models import AnalysisResultRecord

if TYPE_CHECKING:  # bootstrap builds the services this module drives
    from labrig.bootstrap import Services

Say = Callable[[str], None]


@dataclass(frozen=True)
class DemoSummary:
    calibration_id: str
    rms_px: float
    results: list[dict[str, Any]]  # one per attempt: the published (or blocked) result document


def record_virtual(
    services: Services,
    device: DeviceInfo,
    scene: SceneName,
    seconds: float,
    session_id: str | None,
) -> str:
    """Record ``seconds`` of the virtual camera showing ``scene`` (the board scenes as board and
    plane recordings); the committed manifest's SHA-256."""
    camera = VirtualCamera(scene, frames_limit=int(seconds * DEFAULT_MODE.fps))
    recorder = Recorder(
        services.store,
        camera,
        device,
        DEFAULT_MODE,
        session_id=session_id,
        segment_seconds=2.0,
        clock=services.capture.frame_clock(device, DEFAULT_MODE),
        purpose=SCENE_PURPOSE[scene],
    )
    recorder.start()
    recorder.wait(seconds + 30)
    return recorder.stop().manifest_sha256


def _calibrate(services: Services, device: DeviceInfo, say: Say) -> tuple[str, float]:
    board = parse_board("chessboard:9x6:25")
    say("Recording the calibration board as it moves through its poses (20 s)…")
    manifest = record_virtual(services, device, "board", 20.0, None)
    media = load_capture(services.store, manifest)
    result = calibrate_views(
        load_views(list(media.segments), every=30),
        board,
        source=CaptureSource(media.capture_id, manifest, 30),
    )
    say("Recording the board lying on the measurement plane (1 s)…")
    plane = load_capture(services.store, record_virtual(services, device, "plane", 1.0, None))
    detections, _, _ = detect_views(load_views(list(plane.segments), every=10), board)
    stored = save_calibration(
        services.store,
        result,
        device.device_id,
        DEFAULT_MODE.label(),
        plane_homography(result, still_plane_view(detections), board),
    )
    verdict = (
        "valid" if stored.valid else "NOT valid: " + "; ".join(r.message for r in result.reasons)
    )
    say(
        f"Calibration {stored.id[:12]}…: RMS {stored.rms_px:.3f} px over {result.view_count} "
        f"views, {verdict}"
    )
    return stored.id, stored.rms_px


def run_demo(
    services: Services, attempts: int = 2, seconds: float = 3.0, say: Say = print
) -> DemoSummary:
    device = services.capture.find(MARKERS_DEVICE_ID)
    verdict = services.capture.verify(device, DEFAULT_MODE)
    if not verdict.ok:
        raise DeviceRefusedError(verdict.reason, code=verdict.reason_code)
    say(
        f"Verified {device.name}: {verdict.measured.fps:.1f} fps measured"
        if verdict.measured
        else "Verified"
    )
    calibration_id, rms = _calibrate(services, device, say)
    session_id = create_session(services.queue, "DEMO-001", "virtual markers", "labrig-demo")
    attempt_ids = []
    for n in range(attempts):
        say(f"Recording attempt {n + 1} of {attempts} ({seconds:g} s)…")
        manifest = record_virtual(services, device, "markers", seconds, session_id)
        capture_id = load_capture(services.store, manifest).capture_id
        attempt_ids.append(save_attempt(services.queue, session_id, [capture_id]))
    say("Analysing (media.qc → tracking.markers → kinematics)…")
    return DemoSummary(calibration_id, rms, analyse_all(services, attempt_ids))


def analyse_all(services: Services, attempt_ids: list[str]) -> list[dict[str, Any]]:
    """Run every queued stage to the end and publish; the attempts' result documents (each with
    its ``result_id``)."""
    ThreadExecutor(services.queue, workers=2).run(drain=True)
    services.dispatcher.dispatch_all()
    with services.store.read() as session:
        rows = session.scalars(
            select(AnalysisResultRecord).where(AnalysisResultRecord.attempt_id.in_(attempt_ids))
        )
        return [json.loads(r.document) | {"result_id": r.id} for r in rows]
