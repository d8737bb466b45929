"""What the default pipeline's stages compute (declared in ``stages.py``): media quality control,
a rig's sync, marker tracking and kinematics, over an attempt's committed captures.

Each stage reads the committed capture named by its first input digest (the
capture's manifest digest) and, when the configuration names one, a calibration.
Quality gates are raised here, where the evidence is: undecodable media and too
few markers block; no calibration, dropped frames or a frame-count mismatch degrade.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from labrig.calibration import StoredCalibration, load_calibration
from labrig.capture import load_capture
from labrig.capture.rig_sync import (
    capture_stream,
    instrument_stream,
    is_instrument_capture,
    judge_sync,
    measure_sync,
)
from labrig.errors import QualityBlockedError
from labrig.jobs import StageContext, StageOutput
from labrig.pipeline.media_qc import media_qc as check_media
from labrig.pipeline.stage_support import capture_digests, output, track_media
from labrig.store import Store
from labrig.tasks import Share

NO_CALIBRATION = (
    "no valid calibration for this device and mode: results are in pixels, not millimetres"
)


def _calibration(store: Store, config: Mapping[str, Any]) -> StoredCalibration | None:
    calibration_id = config.get("calibration_id")
    return load_calibration(store, calibration_id) if calibration_id else None


def media_qc(store: Store, ctx: StageContext) -> StageOutput:
    digests = capture_digests(ctx)
    every = bool(ctx.config.get("every_camera"))
    chosen = [d for d in digests if not is_instrument_capture(store, d)] if every else digests[:1]
    checked, reasons = [], []
    for n, digest in enumerate(chosen):
        media = load_capture(store, digest)
        part = Share(ctx, n / len(chosen), (n + 1) / len(chosen))
        qc = check_media(
            list(media.segments), list(media.timestamps), media.frame_count, media.fps, part
        )
        which = f"{media.device_id}: " if every else ""
        if qc.undecodable:
            raise QualityBlockedError(
                [which + p for p in qc.problems()], code="LABRIG_MEDIA_UNDECODABLE"
            )
        lost = media.dropped_frames + qc.missing_frames
        if lost > ctx.config["max_dropped_fraction"] * max(qc.decoded_frames, 1):
            reasons.append(
                f"{which}{lost} frames were dropped during recording (over "
                f"{ctx.config['max_dropped_fraction']:.0%} of {qc.decoded_frames})"
            )
        if qc.count_mismatch or qc.header_mismatch:
            reasons += [which + p for p in qc.problems() if "frames" in p and "gap" not in p]
        checked.append({"capture_id": media.capture_id, "qc": qc.to_json()})
    # an attempt grouping several cameras: say plainly what was not analysed
    if not every and len(digests) > 1:
        reasons.append(
            f"this attempt has {len(digests)} captures; the default pipeline analysed "
            f"the first ({checked[0]['capture_id']}) only. The others are stored, not analysed: "
            "make one attempt per camera to analyse each"
        )
    body = dict(checked[0]) | ({"cameras": checked} if every else {})
    return output(body, reasons)


def rig_sync(store: Store, ctx: StageContext) -> StageOutput:
    """The sync of a rig attempt's captures, from their frames' timestamps, through the gate."""
    offsets = ctx.config["offsets_ms"] or [None] * len(ctx.input_digests)
    if not ctx.config["trusted"]:
        raise QualityBlockedError(
            [
                "the post-hoc sync of these videos is not trustworthy (see the attempt's note): "
                "record again with a flash every camera sees"
            ],
            code="LABRIG_SYNC_UNMATCHED",
        )
    pairs = list(zip(ctx.input_digests, offsets, strict=False))
    instrument = {digest: is_instrument_capture(store, digest) for digest, _ in pairs}
    figures = measure_sync(
        [capture_stream(store, d, offset_ms=off) for d, off in pairs if not instrument[d]],
        [instrument_stream(store, d) for d, _ in pairs if instrument[d]],
    )
    verdict = judge_sync(figures, ctx.config)
    if verdict.blocked:
        raise QualityBlockedError([verdict.blocked], code="LABRIG_SYNC_UNMATCHED")
    return output({"sync": figures.to_json()}, verdict.degraded)


def tracking(store: Store, ctx: StageContext) -> StageOutput:
    media = load_capture(store, ctx.input_digests[0])
    calibration = _calibration(store, ctx.config)
    undistort = (calibration.camera_matrix, calibration.dist) if calibration else None
    tracks = track_media(media, ctx.config, undistort, ctx)
    needed = float(ctx.config["min_marker_fraction"])
    # with expected_markers unset, "all expected" would read as 100 % of nothing
    if not tracks.tracks:
        raise QualityBlockedError(
            [
                f"no markers were found in any of the {tracks.frames_processed} frames. Check "
                "lighting, that the markers are in view, and the marker_hue setting if one is set"
            ],
            code="LABRIG_TOO_FEW_MARKERS",
        )
    if tracks.fraction_expected < needed:
        raise QualityBlockedError(
            [
                f"markers were found in {tracks.fraction_expected:.0%} of the frames; at least "
                f"{needed:.0%} are needed. Check lighting and that the markers are in view"
            ],
            code="LABRIG_TOO_FEW_MARKERS",
        )
    return output(
        {
            "capture_id": media.capture_id,
            "calibration_id": calibration.id if calibration else None,
            "tracks": tracks.to_json(),
        },
        [],
    )


def kinematics(store: Store, ctx: StageContext) -> StageOutput:
    from labrig.pipeline.kinematics import tracks_kinematics

    media = load_capture(store, ctx.input_digests[0])
    [tracking] = list(ctx.upstream.values())
    calibration = _calibration(store, ctx.config)
    homography = calibration.plane_homography if calibration is not None else None
    # seconds whenever the frames' times are known, calibrated or not; frames only without any
    units, results = tracks_kinematics(
        tracking["tracks"]["tracks"],
        media.times_s() if media.timed else None,
        media.fps,
        homography,
        ctx.config["window_s"],
    )
    return output(
        {"capture_id": media.capture_id, "units": units, "tracks": results},
        [] if homography is not None else [NO_CALIBRATION],
    )
