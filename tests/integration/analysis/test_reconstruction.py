"""3-D reconstruction end to end on the virtual rig: its four cameras recorded for real (MJPEG at
1280×720), the attempt analysed by rig.sync → media.qc → tracking.rig → reconstruction.3d →
kinematics.3d through the queue, and the published result checked against the world's own marker
paths.

With the cameras' true lenses and poses the reconstruction itself is measured (RMSE ≤ 0.5 mm, the
steady marker's speed within 1 %); with the rig calibration solved from the board pictures the
whole chain is (within what that calibration's error allows). The gates block without a valid rig
calibration or two calibrated cameras, and degrade as their thresholds say."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from labrig.bootstrap import Services, bootstrap
from labrig.calibration.rig import RigCalibration
from labrig.calibration.rig_stored import save_rig_calibration
from labrig.capture import PipelineStep, create_attempt, create_session
from labrig.capture.rigs import builtin_rig
from labrig.pipeline import save_rig_attempt
from labrig.store import Store, open_store
from labrig.store.models import Job
from tests.integration.recording.test_rig_recording import record_frames
from tests.support.analysis_runs import newest_result, run_analysis, stage_output
from tests.support.rig_truth import errors_mm, store_truth_calibration, true_paths

FRAMES = 120  # 4 s at 30 fps: the steady marker goes half round its circle
STEADY_SPEED = 2 * math.pi * 800 / 8  # mm/s


@pytest.fixture(scope="module")
def rig_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    """One recording of the built-in virtual rig, with the true cameras stored as its current
    rig calibration before it was saved (so its attempt asked for the 3-D pipeline)."""
    store = open_store(tmp_path_factory.mktemp("rig") / "store")
    services = bootstrap(store=store)
    store_truth_calibration(store, builtin_rig())
    session = create_session(services.queue, "RIG-3D", "gait", "ana")
    recording = services.capture.start_rig_recording("virtual", session)
    record_frames(recording, FRAMES)
    result = recording.stop()
    services.attempt_id = save_rig_attempt(services.queue, result)  # type: ignore[attr-defined]
    services.captures = [  # type: ignore[attr-defined]
        c.commit.manifest_sha256 for c in result.captures if c.commit
    ]
    services.capture_ids = [c.capture_id for c in result.captures]  # type: ignore[attr-defined]
    services.session_id = session  # type: ignore[attr-defined]
    run_analysis(services)
    yield services
    store.close()


def document(store: Store, attempt_id: str) -> dict[str, Any]:
    return json.loads(newest_result(store, attempt_id).document)  # type: ignore[no-any-return]


def errors_of(services: Services, attempt_id: str) -> dict[int, np.ndarray]:
    """Each reconstructed marker's distance from the true marker it follows, per instant."""
    rec = stage_output(services, attempt_id, "reconstruction.3d")["reconstruction"]
    truth = true_paths(services.store, services.capture.virtual_rig, services.captures[0])  # type: ignore[attr-defined]
    return errors_mm(rec, truth)


def analyse(services: Services, steps: list[PipelineStep]) -> str:
    attempt_id = create_attempt(services.queue, services.session_id, services.capture_ids, steps)  # type: ignore[attr-defined]
    run_analysis(services)
    return attempt_id


def three_d(rig_calibration_id: str | None, **reconstruction: Any) -> list[PipelineStep]:
    return [
        PipelineStep("tracking.rig", {"rig_calibration_id": rig_calibration_id}),
        PipelineStep("reconstruction.3d", reconstruction, after_previous=True),
        PipelineStep("kinematics.3d", {}, after_previous=True),
    ]


def test_a_calibrated_rig_gives_3d_positions_in_mm_that_match_the_true_paths(
    rig_store: Services,
) -> None:
    services = rig_store
    attempt_id = services.attempt_id  # type: ignore[attr-defined]
    with services.store.read() as s:
        stages = list(s.scalars(select(Job.stage_id).where(Job.attempt_id == attempt_id)))
    assert stages == ["rig.sync", "media.qc", "tracking.rig", "reconstruction.3d", "kinematics.3d"]
    doc = document(services.store, attempt_id)
    assert doc["status"] == "published" and not doc["degraded"], doc["reasons"]
    assert doc["units"] == {"length": "mm", "time": "s"}
    assert doc["provenance"]["rig_calibration_id"].startswith("truth-")

    # every marker of the world is found, and each lies within half a millimetre (RMS) of its path
    errors = errors_of(services, attempt_id)
    assert sorted(errors) == [0, 1, 2, 3]
    every = np.concatenate(list(errors.values()))
    assert float(np.sqrt(np.mean(every**2))) <= 0.5, {
        k: float(np.sqrt(np.mean(v**2))) for k, v in errors.items()
    }

    # the steady marker (truth 0: 800 mm round at 1 m high, 628.3 mm/s): its peak speed within 1 %
    rec = stage_output(services, attempt_id, "reconstruction.3d")["reconstruction"]
    steady = next(
        m["track_id"]
        for m in rec["markers"]
        if abs(np.asarray(m["xyz"])[:, 2].mean() - 1000) < 5
        and abs(np.hypot(*np.asarray(m["xyz"])[:, :2].T).mean() - 800) < 5
    )
    metric = next(m for m in doc["metrics"] if m["track_id"] == steady)
    assert metric["peak_speed"] == pytest.approx(STEADY_SPEED, rel=0.01)
    assert metric["range_z"] < 5
    series = next(s for s in doc["series"] if s["track_id"] == steady)
    assert len(series["xyz"][0]) == 3 and series["xy"] is None

    # what a reviewer reads: cameras used and reprojection errors per instant, for each marker
    summary = doc["reconstruction"]
    assert summary["cameras"] == ["front", "right", "back", "left"]
    assert summary["error_rms_px"] < 0.5
    for m in summary["markers"]:
        assert len(m["t"]) == len(m["cameras"]) == len(m["error_px"]) == m["frames"]
        assert set(m["cameras"]) <= {2, 3, 4}


def test_the_rig_calibration_solved_from_board_pictures_reconstructs_the_paths(
    rig_store: Services, solved: RigCalibration
) -> None:
    services = rig_store
    stored = save_rig_calibration(services.store, solved, builtin_rig())
    attempt_id = analyse(services, three_d(stored.id))
    doc = document(services.store, attempt_id)
    assert doc["status"] == "published", doc["reasons"]
    errors = errors_of(services, attempt_id)
    assert sorted(errors) == [0, 1, 2, 3]
    # the calibration's own error (cameras up to 2 mm off from 30 pictures:
    # docs/rig-calibration.md) sets this bound, not the reconstruction (0.15 mm with the truth)
    every = np.concatenate(list(errors.values()))
    rmse = float(np.sqrt(np.mean(every**2)))
    assert rmse <= 1.5, rmse


def test_no_valid_rig_calibration_or_one_camera_in_it_blocks_the_3d_result(
    rig_store: Services,
) -> None:
    services = rig_store
    missing = analyse(services, three_d(None))
    invalid = analyse(
        services, three_d(store_truth_calibration(services.store, builtin_rig(), valid=False))
    )
    one = analyse(services, three_d(store_truth_calibration(services.store, builtin_rig(), [0])))
    for attempt_id, code, words in (
        (missing, "LABRIG_NO_RIG_CALIBRATION", "Calibrate the rig"),
        (invalid, "LABRIG_NO_RIG_CALIBRATION", "made invalid on purpose"),
        (one, "LABRIG_RIG_TOO_FEW_CAMERAS", "two or more calibrated cameras"),
    ):
        doc = document(services.store, attempt_id)
        assert doc["status"] == "blocked" and doc["metrics"] == []
        assert any(words in r for r in doc["reasons"]), doc["reasons"]
        with services.store.read() as s:
            job = s.scalars(
                select(Job).where(Job.attempt_id == attempt_id, Job.stage_id == "tracking.rig")
            ).one()
        assert job.error_code == code


def test_a_marker_two_cameras_carry_and_a_tight_reprojection_limit_degrade(
    rig_store: Services,
) -> None:
    services = rig_store
    truth = store_truth_calibration(services.store, builtin_rig(), [0, 1, 2])
    attempt_id = analyse(
        services, three_d(truth, max_two_camera_share=0.05, max_reprojection_px=0.01)
    )
    doc = document(services.store, attempt_id)
    assert doc["status"] == "published" and doc["degraded"]
    # with three cameras, a marker the pillar hides from one is solved from two
    assert any("seen by only two cameras" in r for r in doc["reasons"]), doc["reasons"]
    assert any("reprojection error" in r for r in doc["reasons"]), doc["reasons"]
    # the left camera is not in this calibration: not used, and said so
    assert any("not in rig calibration" in r for r in doc["reasons"]), doc["reasons"]
    assert doc["reconstruction"]["cameras"] == ["front", "right", "back"]
