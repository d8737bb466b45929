"""A release's health check: the whole pipeline on reference data with known truth, in
a scratch store.

The virtual camera provides the truth: its lens (fx = fy = 1000 px at 1280×720,
centre 639.5, 359.5) and where each marker really was at every frame. The check
calibrates from board views, scales from the board on the plane, imports two
seconds of rendered markers (exact timing, so a busy machine cannot fail it with
dropped frames), analyses them and compares with the truth within stated
tolerances; then the virtual rig's sync, recorded and post hoc, against its ground truth
(:mod:`labrig.scenarios.rig_check`). Nothing touches the production store.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from sqlalchemy import select

from labrig.bootstrap import Services, bootstrap
from labrig.calibration import (
    View,
    calibrate_views,
    detect_views,
    parse_board,
    plane_homography,
    save_calibration,
)
from labrig.capture import DEFAULT_MODE, Mode, VirtualCamera, create_session, import_media
from labrig.jobs import ThreadExecutor
from labrig.pipeline import save_attempt
from labrig.releases import Check, HealthReport
from labrig.results import units_words
from labrig.scenarios.rig_check import rig_checks
from labrig.store.models import AnalysisResultRecord, Capture

TOLERANCES = {"focal_rel": 0.005, "centre_px": 2.0, "path_length_rel": 0.03}


def run_reference_check(
    build: Callable[[Path], Services] = bootstrap, frames: int = 60
) -> HealthReport:
    """Calibrate, scale, import a rendered reference video, analyse it, and compare with the
    truth. ``build`` makes the scratch services from a store folder (the composition root unless a
    test gives its own)."""

    with tempfile.TemporaryDirectory(prefix="labrig-health-") as tmp:
        services = build(Path(tmp) / "store")
        try:
            markers = VirtualCamera("markers")
            markers.open(DEFAULT_MODE)
            video = Path(tmp) / "reference.avi"  # rendered, so its timing is exact: 1/30 s a frame
            size = (DEFAULT_MODE.width, DEFAULT_MODE.height)
            writer = cv2.VideoWriter(
                str(video), cv2.VideoWriter.fourcc(*"MJPG"), DEFAULT_MODE.fps, size
            )
            for i in range(frames):
                writer.write(markers.render(i))
            writer.release()
            session_id = create_session(services.queue, "HEALTH", "reference", "labrig")
            capture_id = import_media(services.store, video, session_id=session_id).capture_id
            with services.store.read() as session:
                capture = session.get(Capture, capture_id)
                assert capture is not None
                device_id, mode = capture.device_id, Mode(**json.loads(capture.mode)).label()
            board = parse_board("chessboard:9x6:25")
            camera = VirtualCamera("board", noise=1.0)
            camera.open(DEFAULT_MODE)
            result = calibrate_views(
                [View(f"v{i}", camera.render(i)) for i in range(0, 600, 30)], board
            )
            plane = VirtualCamera("plane", noise=1.0)
            plane.open(DEFAULT_MODE)
            [detection], _, _ = detect_views([View("plane", plane.render(0))], board)
            save_calibration(
                services.store, result, device_id, mode, plane_homography(result, detection, board)
            )
            save_attempt(services.queue, session_id, [capture_id])
            ThreadExecutor(services.queue, workers=2).run(drain=True)
            services.dispatcher.dispatch_all()
            report = _judge(services, result.camera_matrix, markers, frames)
            rig = rig_checks(services, Path(tmp))
            return replace(
                report,
                passed=report.passed and all(c.ok for c in rig),
                checks=(*report.checks, *rig),
            )
        finally:
            services.close()


def _judge(services: Services, k: Any, truth_camera: VirtualCamera, frames: int) -> HealthReport:

    checks = [
        Check(
            "focal length fx (px)",
            float(k[0, 0]),
            1000.0,
            "±0.5 %",
            abs(k[0, 0] / 1000 - 1) <= 0.005,
        ),
        Check("principal point cx (px)", float(k[0, 2]), 639.5, "±2 px", abs(k[0, 2] - 639.5) <= 2),
        Check("principal point cy (px)", float(k[1, 2]), 359.5, "±2 px", abs(k[1, 2] - 359.5) <= 2),
    ]
    with services.store.read() as session:
        row = session.scalars(select(AnalysisResultRecord)).first()
    if row is None:
        return HealthReport(False, tuple(checks), "the pipeline published no result")
    document = json.loads(row.document)
    truth_camera.open(DEFAULT_MODE)
    true_paths = sorted(
        float(
            np.sum(
                np.hypot(
                    *np.diff(
                        np.array(
                            [truth_camera.truth(i)["markers"][m]["plane_mm"] for i in range(frames)]
                        ),
                        axis=0,
                    ).T
                )
            )
        )
        for m in range(3)
    )
    measured = sorted(m["path_length"] for m in document["metrics"])
    for n, (got, want) in enumerate(zip(measured, true_paths, strict=False)):
        checks.append(
            Check(
                f"marker path length #{n + 1} (mm)",
                float(got),
                want,
                "±3 %",
                abs(got / want - 1) <= TOLERANCES["path_length_rel"],
            )
        )
    passed = (
        document["status"] == "published"
        and not document["degraded"]
        and len(measured) == 3
        and all(c.ok for c in checks)
    )
    why = "; ".join(document["reasons"])
    return HealthReport(
        passed,
        tuple(checks),
        f"result {document['status']}, units: {units_words(document['units'])}"
        + (f"; {why}" if why else ""),
    )


def release_health_check() -> HealthReport:
    """The check the front ends hand to :func:`~labrig.bootstrap.bootstrap`: the reference check in
    a scratch store."""
    return run_reference_check(bootstrap)
