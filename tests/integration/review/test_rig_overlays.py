"""What the review player draws over a rig's 3-D result, against the virtual rig's ground truth: two
seconds of the built-in virtual rig (four cameras, MJPEG at 1280×720) recorded for real under its
true cameras and analysed in 3-D through the queue, then read as the Review screen reads it
(``ReviewedResults.media``).

Every camera gets every marker: its detections there and its 3-D point reprojected into it. The
reprojections lie on the virtual rig's true image positions of the markers (each camera's frame
read back by its tag); the distance drawn between a detection and its reprojection is the one the
reconstruction measured (their RMS over the cameras a point was solved from is its ``error_px``);
the frames to look at are the reconstruction's gaps and, with a calibration whose ``right`` camera
is tilted 0.6°, the reprojection errors over the limit, naming that camera."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import pytest

from labrig.bootstrap import Services, bootstrap
from labrig.calibration import load_rig_calibration
from labrig.calibration.rig_stored import binding_digest, rig_binding
from labrig.capture import CaptureMedia, PipelineStep, create_attempt, create_session
from labrig.capture.rig_camera import rig_camera_index
from labrig.capture.rigs import Rig, builtin_rig
from labrig.capture.sink import read_sidecar
from labrig.capture.sources import Mode
from labrig.domain.corrections import rig_suspicious_frames
from labrig.pipeline import save_rig_attempt
from labrig.pipeline.lens import undistort_px
from labrig.review import ResultMedia
from labrig.review.rig_overlays import LOOK_REPROJECTION_PX
from labrig.scenarios.rig_truth import matched, store_rig_document, truth_document
from labrig.store import Store, open_store
from tests.integration.recording.test_rig_recording import record_frames
from tests.support.analysis_runs import newest_result, run_analysis, stage_output
from tests.support.rig_truth import store_truth_calibration, true_paths

FRAMES = 60  # 2 s at 30 fps
MODE = Mode(1280, 720, 30.0)


@dataclass
class RigResult:
    services: Services
    result_id: str
    attempt_id: str
    session_id: str
    capture_ids: list[str]

    def media(self, result_id: str | None = None) -> ResultMedia:
        return self.services.governance.reviewed.media(result_id or self.result_id)

    def output(self, stage_id: str, attempt_id: str | None = None) -> dict[str, Any]:
        return stage_output(self.services, attempt_id or self.attempt_id, stage_id)


def record_rig_result(store: Store) -> RigResult:
    """The built-in virtual rig recorded for :data:`FRAMES` frames under its true cameras (stored
    as its current rig calibration first, so the attempt asks for 3-D), analysed and published."""
    services = bootstrap(store=store)
    store_truth_calibration(store, builtin_rig())
    session = create_session(services.queue, "RIG-PLAYER", "gait", "ana")
    recording = services.capture.start_rig_recording("virtual", session)
    record_frames(recording, FRAMES)
    result = recording.stop()
    attempt_id = save_rig_attempt(services.queue, result)
    run_analysis(services)
    row = newest_result(store, attempt_id)
    assert row.status == "published", row.document
    return RigResult(services, row.id, attempt_id, session, [c.capture_id for c in result.captures])


def device_frames(media: CaptureMedia) -> list[int]:
    """Each stored frame's number on its virtual camera (what its tag draws), by stored index."""
    return [int(r[3]) for p in media.timestamps if p is not None for r in read_sidecar(p)]


def rig_index(device_id: str) -> int:
    index = rig_camera_index(device_id.split(":", 1)[1])
    assert index is not None, device_id
    return index


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RigResult]:
    store = open_store(tmp_path_factory.mktemp("rig-overlays") / "store")
    built = record_rig_result(store)
    yield built
    built.services.close()  # its dispatcher, then the store


def test_every_camera_draws_each_marker_detected_and_reprojected(
    rig: RigResult,
) -> None:
    media = rig.media()
    rec = rig.output("reconstruction.3d")["reconstruction"]
    assert rec["cameras"] == ["front", "right", "back", "left"] and len(media.cameras) == 4
    # nothing for the correction form (a rig's markers are corrected from the command line); its
    # speeds, in mm/s, for the speed plot
    assert media.overlays == [] and media.curves is not None
    assert media.curves.units == ("mm", "s") and len(media.curves.effective) == 4
    markers = {str(m["track_id"]): m for m in rec["markers"]}
    assert len(markers) == 4
    assert len(media.overlays_by_camera) == 4
    for overlays in media.overlays_by_camera:
        assert sorted(o.track_id for o in overlays) == sorted(markers)
        for o in overlays:
            assert o.reprojected is not None and o.view_error_px is not None
            assert o.automatic is o.effective and len(o.automatic.frames) > 10
            # at each instant the marker was made at, where the camera has a frame
            assert len(o.reprojected.frames) >= 0.8 * len(markers[o.track_id]["instants"])
            assert o.view_error_px.shape == o.reprojected.frames.shape
            assert list(o.colour_rgb or ()) == markers[o.track_id]["colour_rgb"]

    # to look at: each gap of a marker's 3-D positions (its first frame), no error over the limit
    assert max(max(m["error_px"]) for m in rec["markers"]) < LOOK_REPROJECTION_PX
    assert media.rig_looks is not None
    assert [(s.frame, s.track_id) for s in media.rig_looks] == sorted(
        (a, name) for name, m in markers.items() for a, _ in m["gaps"]
    )
    assert all("no 3-D position from frame" in s.why for s in media.rig_looks)


def test_each_reprojected_point_lies_on_the_markers_true_image_position(
    rig: RigResult,
) -> None:
    media = rig.media()
    tracked = rig.output("tracking.rig")
    rec = rig.output("reconstruction.3d")["reconstruction"]
    truth = true_paths(
        rig.services.store,
        rig.services.capture.virtual_rig,
        tracked["cameras"][0]["manifest_sha256"],
    )
    true_marker = {str(mid): who for who, (mid, _) in matched(rec, truth).items()}
    world = rig.services.capture.virtual_rig
    reprojected, detected = [], []
    for camera, captured, overlays in zip(
        media.cameras, media.media, media.overlays_by_camera, strict=True
    ):
        numbers, index = device_frames(captured), rig_index(camera.device_id)
        for o in overlays:
            assert o.reprojected is not None
            for frame, xy in zip(o.reprojected.frames, o.reprojected.xy, strict=True):
                seen = world.truth(index, MODE, numbers[frame])["markers"][true_marker[o.track_id]]
                reprojected.append(np.hypot(*(np.asarray(seen["image_px"]) - xy)))
                here = o.automatic.at(int(frame))
                if here is not None:
                    detected.append(np.hypot(*(np.asarray(seen["image_px"]) - here)))
    off, found = np.asarray(reprojected), np.asarray(detected)
    print(
        f"reprojected vs truth over {len(off)} points: mean {off.mean():.3f} px, "
        f"p95 {np.percentile(off, 95):.3f} px, max {off.max():.3f} px; detections vs truth: "
        f"mean {found.mean():.3f} px, max {found.max():.3f} px"
    )
    assert len(off) > 4 * 4 * FRAMES // 2
    assert off.mean() <= 0.1 and np.percentile(off, 95) <= 0.2 and off.max() <= 0.6


def test_the_distance_drawn_is_the_reconstructions_reprojection_error(rig: RigResult) -> None:
    media = rig.media()
    out = rig.output("reconstruction.3d")
    rec = out["reconstruction"]
    cameras = {
        c.name: c
        for c in load_rig_calibration(rig.services.store, out["rig_calibration_id"]).cameras()
    }
    lenses = [(cameras[n].matrix, cameras[n].dist) for n in rec["cameras"]]
    # each camera: its detection and its reprojection, taken back through its lens, are as far
    # apart as the reconstruction measured that view
    compared = 0
    for overlays, lens in zip(media.overlays_by_camera, lenses, strict=True):
        for o in overlays:
            assert o.reprojected is not None and o.view_error_px is not None
            for frame, xy, error in zip(
                o.reprojected.frames, o.reprojected.xy, o.view_error_px, strict=True
            ):
                here = o.automatic.at(int(frame))
                if here is None:
                    assert np.isnan(error)
                    continue
                a, b = undistort_px([here, xy], lens)
                assert float(np.hypot(*(a - b))) == pytest.approx(error, abs=1e-6)
                compared += 1
    assert compared > 500
    # over the cameras each point was solved from, their RMS is the error_px the result reports
    for m in rec["markers"]:
        for instant, views, reported in zip(m["instants"], m["views"], m["error_px"], strict=True):
            frames = media.frames_at(instant)  # the player's first camera is the first one here
            errors = []
            for k, (overlays, frame) in enumerate(
                zip(media.overlays_by_camera, frames, strict=True)
            ):
                if not (views >> k) & 1:
                    continue
                assert frame is not None
                o = next(o for o in overlays if o.track_id == str(m["track_id"]))
                assert o.reprojected is not None and o.view_error_px is not None
                errors.append(o.view_error_px[list(o.reprojected.frames).index(frame)])
            assert len(errors) >= 2
            assert float(np.sqrt(np.mean(np.square(errors)))) == pytest.approx(reported, abs=2e-3)


def store_turned_calibration(store: Store, rig: Rig, camera: int, degrees: float) -> str:
    """The rig's true cameras with camera ``camera`` tilted ``degrees`` about its horizontal axis
    (its picture moves up or down: every other camera sees the marker's height, so this camera
    fits worst), stored as a valid rig calibration of ``rig``; its id."""
    document = truth_document(range(len(rig.devices))) | {"valid": True, "reasons": []}
    spec = document["cameras"][camera]
    rot, _ = cv2.Rodrigues(np.asarray(spec["rotation_vector_rad"], dtype=np.float64))
    turn, _ = cv2.Rodrigues(np.array([np.radians(degrees), 0.0, 0.0]))
    rvec, _ = cv2.Rodrigues(turn @ rot)
    spec["rotation_vector_rad"] = [float(v) for v in rvec.ravel()]
    spec["translation_mm"] = [float(v) for v in turn @ np.asarray(spec["translation_mm"])]
    calibration_id = f"turned-{camera}-{degrees}-{binding_digest(rig_binding(rig))[:8]}"
    return store_rig_document(store, rig, calibration_id, document)


def test_a_camera_off_its_calibration_is_named_where_the_reprojection_error_is_high(
    rig: RigResult,
) -> None:
    services = rig.services
    turned = store_turned_calibration(services.store, builtin_rig(), 1, 0.6)  # "right"
    attempt_id = create_attempt(
        services.queue,
        rig.session_id,
        rig.capture_ids,
        [
            PipelineStep("tracking.rig", {"rig_calibration_id": turned}),
            # the turned camera's tracks still matched and its views kept: its error shows
            PipelineStep(
                "reconstruction.3d",
                {"max_epipolar_px": 30.0, "max_view_error_px": 50.0},
                after_previous=True,
            ),
            PipelineStep("kinematics.3d", {}, after_previous=True),
        ],
    )
    run_analysis(services)
    row = newest_result(services.store, attempt_id)
    assert row.status == "published", row.document
    media = rig.media(row.id)
    rec = rig.output("reconstruction.3d", attempt_id)["reconstruction"]
    markers = {str(m["track_id"]): m for m in rec["markers"]}
    assert media.rig_looks is not None
    looks = [s for s in media.rig_looks if "reprojection error" in s.why]
    print("\n".join(f"frame {s.frame} · marker {s.track_id}: {s.why}" for s in looks))
    # one entry per run of consecutive instants over the limit, at its worst, with its error
    runs = 0
    for m in markers.values():
        over = np.flatnonzero(np.asarray(m["error_px"]) > LOOK_REPROJECTION_PX)
        at = np.asarray(m["instants"])[over]
        runs += len(over) and 1 + int(np.sum(np.diff(at) > 1))
    assert runs > 0 and len(looks) == runs
    for s in looks:
        m = markers[s.track_id]
        error = m["error_px"][m["instants"].index(s.frame)]
        assert error > LOOK_REPROJECTION_PX
        assert s.why.startswith(f"reprojection error {error:.1f} px in right")
    # the distance drawn in the turned camera at such a frame is the one that is off
    s = looks[0]
    frame = media.frames_at(s.frame)[1]
    o = next(o for o in media.overlays_by_camera[1] if o.track_id == s.track_id)
    assert o.reprojected is not None and o.view_error_px is not None
    k = list(o.reprojected.frames).index(frame)
    assert o.view_error_px[k] > LOOK_REPROJECTION_PX


def test_a_rigs_frames_to_look_at_are_its_error_runs_at_their_worst_and_its_gaps() -> None:
    frames = np.array([3, 4, 5, 6, 9, 10, 11, 12])
    errors = np.array([0.5, 2.5, 3.4, 2.1, 0.2, 2.2, 0.1, 0.3])
    worst = ["front", "right", "back", "right", "front", "left", "front", "front"]
    looks = rig_suspicious_frames({"1": (frames, errors, worst)}, {"1": [(7, 8)]}, limit_px=2.0)
    assert [(s.frame, s.why) for s in looks] == [
        (5, "reprojection error 3.4 px in back (frames 4–6 over 2 px)"),
        (7, "no 3-D position from frame 7 to 8 (2 frames)"),
        (10, "reprojection error 2.2 px in left"),
    ]
