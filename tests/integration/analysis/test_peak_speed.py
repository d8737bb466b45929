"""Peak speeds of a real recording analysed by the real stages, against the scene's truth and a
named peer.

Three seconds of the virtual camera's markers, as ``labrig demo`` records an attempt, calibrated to
mm (intrinsics from board views, scale from the board on the plane), then media.qc → tracking →
kinematics through the queue and the publisher. Each track's published peak speed is compared with
its marker's true peak over the recorded interval (the analytic path of ``MARKERS``) and with the
peak of a peer on the same tracked positions: the derivative of SciPy's generalised-cross-validation
smoothing spline (``scipy.interpolate.make_smoothing_spline``), on the same plane mapping.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.interpolate import make_smoothing_spline
from sqlalchemy import select

from labrig.bootstrap import Services, bootstrap
from labrig.capture.virtual_scenes import MARKERS
from labrig.pipeline.kinematics import to_plane_mm
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord
from tests.integration.analysis.test_kinematics import true_speed
from tests.support.analysis_runs import (
    analyse,
    calibrate_markers_camera,
    new_session,
    record,
    stage_output,
)

SECONDS = 3.0  # an attempt of `labrig demo`
FPS = 30.0


@pytest.fixture
def services(store: Store) -> Services:
    return bootstrap(store=store)


def _result(services: Services, attempt_id: str) -> dict[str, object]:
    with services.store.read() as session:
        doc = session.scalar(
            select(AnalysisResultRecord.document).where(
                AnalysisResultRecord.attempt_id == attempt_id
            )
        )
    assert doc is not None
    return json.loads(doc)  # type: ignore[no-any-return]


def _marker(mm_at_start: np.ndarray) -> str:
    """The marker whose true path starts nearest to this position (mm)."""
    starts = [np.hypot(*(np.array(path(0.0)) - mm_at_start)) for _, _, path in MARKERS]
    return MARKERS[int(np.argmin(starts))][0]


def _peer_peak(t: np.ndarray, mm: np.ndarray) -> float:
    """The peer: peak speed of SciPy's smoothing splines (penalty chosen by GCV) through x(t), y(t),
    evaluated finely over the whole track."""
    x, y = (make_smoothing_spline(t, mm[:, k]) for k in (0, 1))
    fine = np.linspace(t[0], t[-1], 4001)
    return float(np.hypot(x.derivative()(fine), y.derivative()(fine)).max())


def test_each_tracks_peak_speed_is_within_one_percent_of_the_truth(services: Services) -> None:
    calibration = calibrate_markers_camera(services)
    assert calibration.plane_homography is not None
    session_id = new_session(services, "DEMO-001")
    attempt_id = analyse(services, session_id, record(services, session_id, seconds=SECONDS))
    result = _result(services, attempt_id)
    assert result["units"] == {"length": "mm", "time": "s"}
    peaks = {m["track_id"]: m for m in result["metrics"]}  # type: ignore[attr-defined]
    windows = {
        k["track_id"]: k["window_samples"]
        for k in stage_output(services, attempt_id, "kinematics")["tracks"]  # type: ignore[attr-defined]
    }
    tracks = stage_output(services, attempt_id, "tracking.markers")["tracks"]
    named = set()
    for item in tracks["tracks"]:  # type: ignore[index]
        t = np.asarray(item["frames"], dtype=np.float64) / FPS  # the steady clock's stamps
        mm = to_plane_mm(item["xy"], calibration.plane_homography)
        name = _marker(mm[0])
        named.add(name)
        # undistorted positions are distorted back to read the colour: the right marker's
        bgr = next(c for n, c, _ in MARKERS if n == name)
        assert np.abs(np.subtract(item["colour_rgb"], bgr[::-1])).max() <= 12, name
        truth = float(true_speed(name, np.linspace(0.0, t[-1], 4001)).max())
        ours = peaks[item["track_id"]]["peak_speed"]
        peer = _peer_peak(t, mm)
        print(
            f"peak speed {name}: true {truth:.2f} mm/s, ours {ours:.2f} "
            f"({100 * (ours - truth) / truth:+.2f} %) at "
            f"{peaks[item['track_id']]['time_to_peak_speed']:.2f} s, "
            f"peer (scipy make_smoothing_spline) {peer:.2f} ({100 * (peer - truth) / truth:+.2f} %)"
        )
        assert ours == pytest.approx(truth, rel=0.01)
        # never from the edge fits: the constant-speed circle's peak is anywhere, but not there
        half = windows[item["track_id"]] // 2 / FPS
        at = peaks[item["track_id"]]["time_to_peak_speed"]
        assert half - 1e-9 <= at <= t[-1] - half + 1e-9, f"{name}'s peak at {at} s is in an edge"
        # the peer reads the same tracked data alike: the data carry the truth, not our smoothing
        assert peer == pytest.approx(truth, rel=0.02)
    assert named == {name for name, _, _ in MARKERS}
