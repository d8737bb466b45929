"""The default analysis pipeline as registered queue stages: media.qc →
tracking.markers → kinematics, after rig.sync for an attempt recorded by a rig; for a rig with a
rig calibration, rig.sync → media.qc → tracking.rig → reconstruction.3d → kinematics.3d
(``rig_stages.py``).

Each stage reads the committed capture named by its first input digest (the
capture's manifest digest) and, when the configuration names one, a calibration.
Quality gates are raised here, where the evidence is: undecodable media and too
few markers block; no calibration, dropped frames or a frame-count mismatch degrade.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from labrig.calibration import StoredCalibration, load_calibration
from labrig.capture import load_capture
from labrig.capture.rig_sync import (
    SYNC_DEFAULTS,
    capture_stream,
    instrument_stream,
    is_instrument_capture,
    judge_sync,
    measure_sync,
)
from labrig.errors import QualityBlockedError
from labrig.jobs import NO_MODEL_DIGEST, Setting, Stage, StageContext, StageOutput, in_range
from labrig.pipeline import rig_stages
from labrig.pipeline.media_qc import media_qc
from labrig.pipeline.stage_support import (
    MARKER_SETTINGS,
    WINDOW_S,
    capture_digests,
    output,
    track_media,
)
from labrig.store import Store
from labrig.tasks import Share

NO_CALIBRATION = (
    "no valid calibration for this device and mode: results are in pixels, not millimetres"
)
QC_DEFAULTS: Mapping[str, Any] = {"max_dropped_fraction": 0.01, "every_camera": False}
TRACKING_DEFAULTS: Mapping[str, Any] = {
    "calibration_id": None,
    "min_marker_fraction": 0.6,
    "expected_markers": None,
    "marker_hue": None,
}
KINEMATICS_DEFAULTS: Mapping[str, Any] = {"calibration_id": None, "window_s": 0.25}

_CALIBRATION = Setting(
    (str,), "id of the calibration to use; null: the device's valid one", nullable=True
)
QC_SCHEMA: Mapping[str, Setting] = {
    "max_dropped_fraction": Setting(
        (float,), "dropped frames above this fraction degrade the result", check=in_range(0, 1)
    ),
    "every_camera": Setting(
        (bool,), "check every camera of the attempt (a rig's 3-D pipeline), not the first only"
    ),
}
TRACKING_SCHEMA: Mapping[str, Setting] = {
    "calibration_id": _CALIBRATION,
    "min_marker_fraction": Setting(
        (float,), "markers must be found in at least this fraction of frames", check=in_range(0, 1)
    ),
    **MARKER_SETTINGS,
}
KINEMATICS_SCHEMA: Mapping[str, Setting] = {
    "calibration_id": _CALIBRATION,
    "window_s": WINDOW_S,
}


SYNC_SCHEMA: Mapping[str, Setting] = {
    "max_spread_fraction": Setting(
        (float,),
        "a spread between the cameras' frames above this fraction of a frame interval, at p99, "
        "degrades the result",
        check=in_range(0, 1),
    ),
    "max_unmatched_fraction": Setting(
        (float,),
        "a camera missing its frame at more than this fraction of the instants degrades",
        check=in_range(0, 1),
    ),
    "min_matched_fraction": Setting(
        (float,),
        "fewer instants than this fraction with a frame from every camera blocks",
        check=in_range(0, 1),
    ),
    "offsets_ms": Setting(
        (list,),
        "videos from separate devices: each one's offset (ms) from the first, found by post-hoc "
        "sync; null: the frames' own timestamps",
        nullable=True,
    ),
    "trusted": Setting((bool,), "false: the post-hoc offsets are not trustworthy, which blocks"),
}


def _calibration(store: Store, config: Mapping[str, Any]) -> StoredCalibration | None:
    calibration_id = config.get("calibration_id")
    return load_calibration(store, calibration_id) if calibration_id else None


def _media_qc(store: Store, ctx: StageContext) -> StageOutput:
    digests = capture_digests(ctx)
    every = bool(ctx.config.get("every_camera"))
    chosen = [d for d in digests if not is_instrument_capture(store, d)] if every else digests[:1]
    checked, reasons = [], []
    for n, digest in enumerate(chosen):
        media = load_capture(store, digest)
        part = Share(ctx, n / len(chosen), (n + 1) / len(chosen))
        qc = media_qc(
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


def _rig_sync(store: Store, ctx: StageContext) -> StageOutput:
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


def _tracking(store: Store, ctx: StageContext) -> StageOutput:
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


def _kinematics(store: Store, ctx: StageContext) -> StageOutput:
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


def analysis_stages(store: Store, release_digest: str = NO_MODEL_DIGEST) -> tuple[Stage, ...]:
    """The default pipeline's stages, bound to ``store`` (where they read media and calibrations).

    ``release_digest``: the active release's manifest digest, which enters every job's
    idempotency key.
    """

    def stage(
        stage_id: str,
        run: Callable[[Store, StageContext], StageOutput],
        defaults: Mapping[str, Any],
        schema: Mapping[str, Setting],
        description: str,
        schema_version: int = 1,
    ) -> Stage:
        return Stage(
            stage_id,
            schema_version,
            True,
            lambda ctx: run(store, ctx),
            model_manifest_digest=release_digest,
            config_defaults=defaults,
            config_schema=schema,
            description=description,
        )

    return (
        stage(
            "rig.sync",
            _rig_sync,
            SYNC_DEFAULTS,
            SYNC_SCHEMA,
            "a rig's cameras matched frame by frame: spread, unmatched frames, drift",
        ),
        # version 2: the captures counted are the attempt's own (version 1 counted the outputs
        # of the jobs it waits on too, a rig's sync), and every_camera: a new key for new text
        stage(
            "media.qc",
            _media_qc,
            QC_DEFAULTS,
            QC_SCHEMA,
            "decode every frame; frame counts, timestamp gaps, blur and exposure",
            schema_version=2,
        ),
        # version 2: tracks on the luma plane decoded from the JPEG (version 1 converted BGR frames
        # to grey), which moves positions by a few hundredths of a pixel: a new key, so no false
        # reproducibility incident. Version 3: each track carries its marker's colour
        stage(
            "tracking.markers",
            _tracking,
            TRACKING_DEFAULTS,
            TRACKING_SCHEMA,
            "bright markers per frame, linked into tracks; undistorted with the calibration",
            schema_version=3,
        ),
        # version 2: the peak speed is searched where the velocity is a centred fit, never in the
        # edge half-windows (pipeline/kinematics.py), and uncalibrated results are in px and s
        # when the frames' times are known: outputs change, so old outputs keep their keys
        stage(
            "kinematics",
            _kinematics,
            KINEMATICS_DEFAULTS,
            KINEMATICS_SCHEMA,
            "positions in mm and s through the calibration plane; Savitzky-Golay speeds",
            schema_version=2,
        ),
        stage(
            "tracking.rig",
            rig_stages.rig_tracking,
            rig_stages.RIG_TRACKING_DEFAULTS,
            rig_stages.RIG_TRACKING_SCHEMA,
            "markers tracked in every camera of a calibrated rig, each through its own lens",
        ),
        stage(
            "reconstruction.3d",
            rig_stages.reconstruction,
            rig_stages.RECONSTRUCTION_DEFAULTS,
            rig_stages.RECONSTRUCTION_SCHEMA,
            "markers matched across cameras (epipolar distance) and triangulated in world mm",
        ),
        stage(
            "kinematics.3d",
            rig_stages.kinematics_3d,
            rig_stages.KINEMATICS_3D_DEFAULTS,
            rig_stages.KINEMATICS_3D_SCHEMA,
            "3-D paths in mm and s; Savitzky-Golay speeds",
        ),
    )
