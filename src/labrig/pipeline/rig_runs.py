"""What the 3-D stages of a calibrated rig's attempt compute (declared, with their settings, in
``rig_stages.py``): tracking.rig → reconstruction.3d → kinematics.3d.

Quality gates, raised where the evidence is: no rig calibration, one that is not valid, or fewer
than two of the attempt's cameras in it block (no 3-D without two calibrated views); no marker seen
by two cameras blocks; a camera the calibration does not cover, a marker that relies on only two
cameras for more than ``max_two_camera_share`` of its frames, and reprojection errors above
``max_reprojection_px`` (at p95) degrade.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from labrig.calibration import (
    CalibratedCamera,
    StoredRigCalibration,
    load_rig_calibration,
    pair_instants,
)
from labrig.capture import load_capture
from labrig.capture.rig_sync import capture_stream, is_instrument_capture
from labrig.errors import QualityBlockedError
from labrig.jobs import StageContext, StageOutput
from labrig.pipeline.rig_stages import NO_RIG_CALIBRATION, TOO_FEW_CAMERAS
from labrig.pipeline.stage_support import capture_digests, output, track_media
from labrig.store import Store
from labrig.tasks import Share


def _rig_calibration(store: Store, config: Mapping[str, Any]) -> StoredRigCalibration:
    calibration_id = config.get("rig_calibration_id")
    if not calibration_id:
        raise QualityBlockedError(
            [
                "no valid rig calibration for this rig: no 3-D positions. Calibrate the rig "
                "('labrig calibrate-rig --rig NAME --capture-attempt ID', from a rig recording of "
                "the board), then record the attempt again"
            ],
            code=NO_RIG_CALIBRATION,
        )
    calibration = load_rig_calibration(store, calibration_id)
    if not calibration.valid:
        raise QualityBlockedError(
            [
                f"rig calibration {calibration.id[:12]} is not valid ("
                + "; ".join(calibration.reasons)
                + "): calibrate the rig again, then record the attempt again"
            ],
            code=NO_RIG_CALIBRATION,
        )
    return calibration


def _calibrated(
    store: Store, ctx: StageContext, calibration: StoredRigCalibration
) -> tuple[list[tuple[str, CalibratedCamera]], list[str]]:
    """The attempt's camera captures the calibration covers (digest, camera), and a sentence for
    each camera it does not."""
    cameras = calibration.cameras()
    found, missing = [], []
    for digest in capture_digests(ctx):
        if is_instrument_capture(store, digest):
            continue
        media = load_capture(store, digest)
        size = (int(media.mode["width"]), int(media.mode["height"]))
        match = [c for c in cameras if c.device_id == media.device_id]
        # the lens and pose hold at the calibrated image size, whatever the rate or format
        if match and match[0].image_size == size:
            found.append((digest, match[0]))
        elif match:
            w, h = match[0].image_size
            missing.append(
                f"camera {match[0].name} recorded at {size[0]}x{size[1]}, but the rig "
                f"calibration was made at {w}x{h}: not used for 3-D. Calibrate the rig in this "
                "mode"
            )
        else:
            missing.append(
                f"device {media.device_id} is not in rig calibration {calibration.id[:12]}: not "
                "used for 3-D"
            )
    if len(found) < 2:
        raise QualityBlockedError(
            [
                f"3-D needs two or more calibrated cameras; this attempt has {len(found)} in rig "
                f"calibration {calibration.id[:12]}"
                + (f" ({'; '.join(missing)})" if missing else "")
            ],
            code=TOO_FEW_CAMERAS,
        )
    return found, missing


def rig_tracking(store: Store, ctx: StageContext) -> StageOutput:
    calibration = _rig_calibration(store, ctx.config)
    found, missing = _calibrated(store, ctx, calibration)
    cameras = []
    for n, (digest, camera) in enumerate(found):
        media = load_capture(store, digest)
        part = Share(ctx, n / len(found), (n + 1) / len(found), f"tracking camera {camera.name}")
        tracks = track_media(media, ctx.config, (camera.matrix, camera.dist), part)
        cameras.append(
            {
                "camera": camera.name,
                "capture_id": media.capture_id,
                "manifest_sha256": digest,
                "tracks": tracks.to_json(),
            }
        )
    return output({"rig_calibration_id": calibration.id, "cameras": cameras}, missing)


def reconstruction(store: Store, ctx: StageContext) -> StageOutput:
    from labrig.pipeline.reconstruction import (
        CameraTracks,
        ReconstructionSettings,
        reconstruct,
    )
    from labrig.pipeline.tracking import Track

    [tracked] = list(ctx.upstream.values())
    calibration = _rig_calibration(store, {"rig_calibration_id": tracked["rig_calibration_id"]})
    by_name = {c.name: c for c in calibration.cameras()}
    offsets = ctx.config["offsets_ms"] or []
    order = {d: i for i, d in enumerate(capture_digests(ctx))}
    streams = [
        capture_stream(
            store,
            cam["manifest_sha256"],
            cam["camera"],
            offsets[order[cam["manifest_sha256"]]] if offsets else None,
        )
        for cam in tracked["cameras"]
    ]
    frames_at = pair_instants([s.mono_ns for s in streams], [s.fps for s in streams])
    inputs = [
        CameraTracks(
            by_name[cam["camera"]],
            [Track.from_json(t) for t in cam["tracks"]["tracks"]],
            frames_at[k],
        )
        for k, cam in enumerate(tracked["cameras"])
    ]
    settings = ReconstructionSettings(
        max_epipolar_px=ctx.config["max_epipolar_px"],
        max_view_error_px=ctx.config["max_view_error_px"],
        refine=ctx.config["refine"],
    )
    result = reconstruct(inputs, settings)
    ctx.check_cancelled()
    if not result.markers:
        raise QualityBlockedError(
            [
                "no marker was seen by two cameras at once: nothing to triangulate. Check that "
                "the markers are in view of at least two cameras and lit"
            ],
            code="LABRIG_TOO_FEW_MARKERS",
        )
    mono = np.asarray(streams[0].mono_ns, dtype=np.int64)[frames_at[0]]
    body = result.to_json()
    reasons = _judge(body, ctx.config)
    return output(
        {
            "rig_calibration_id": calibration.id,
            "world": calibration.document.get("world"),
            "times_s": np.round((mono - mono[0]) / 1e9, 9).tolist(),
            "reconstruction": body,
        },
        reasons,
    )


def _judge(body: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    reasons = []
    share, limit = config["max_two_camera_share"], config["max_reprojection_px"]
    for m in body["markers"]:
        if m["two_camera_share"] > share:
            reasons.append(
                f"marker {m['track_id']} was seen by only two cameras in "
                f"{m['two_camera_share']:.0%} of its frames (over {share:.0%}): its depth is "
                "less certain. Add a camera where it is hidden, or keep it in view of more"
            )
        if m["error_p95_px"] is not None and m["error_p95_px"] > limit:
            reasons.append(
                f"marker {m['track_id']}'s reprojection error is {m['error_p95_px']:.2f} px at "
                f"p95 (over {limit:g} px): check the rig calibration is current, and that "
                "markers do not merge in one camera's picture"
            )
    return reasons


def markers_kinematics(
    markers: Iterable[Mapping[str, Any]], times_s: Any, window_s: float | None
) -> list[dict[str, Any]]:
    """The ``kinematics.3d`` stage's work on reconstructed markers (each ``instants`` and ``xyz``
    in mm, its ``track_id`` and ``colour_rgb``): one document per marker, in mm and s. The stage
    and a reviewer's corrected markers share it, so a correction's effective result is computed
    exactly as the automatic one was."""
    from labrig.pipeline.kinematics import kinematics

    times = np.asarray(times_s, dtype=np.float64)
    results = []
    for m in markers:
        instants = np.asarray(m["instants"], dtype=np.int64)
        xyz = np.asarray(m["xyz"], dtype=np.float64).reshape(-1, 3)
        k = kinematics(xyz, times[instants], "mm", "s", window_s=window_s)
        results.append({"track_id": m["track_id"], "colour_rgb": m["colour_rgb"], **k.to_json()})
    return results


def kinematics_3d(store: Store, ctx: StageContext) -> StageOutput:
    [reconstructed] = list(ctx.upstream.values())
    ctx.check_cancelled()
    results = markers_kinematics(
        reconstructed["reconstruction"]["markers"],
        reconstructed["times_s"],
        ctx.config["window_s"],
    )
    return output(
        {
            "rig_calibration_id": reconstructed["rig_calibration_id"],
            "units": {"length": "mm", "time": "s"},
            "tracks": results,
        },
        [],
    )
