"""The synthetic analysis a result carries: the 3-D reconstruction and kinematics templates,
and each stage's committed output and, where a quality gate degraded or stopped it, its
reasons, in the stage's own words."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from labrig.capture.rig_sync import SYNC_DEFAULTS
from labrig.pipeline.rig_runs import markers_kinematics
from tests.benchmarks.catalog.lab import PLACES, SEGMENT_NAME
from tests.benchmarks.catalog.rows import Draft, Template

NO_RIG_CALIBRATION = (
    "no valid rig calibration for this rig: no 3-D positions. Calibrate the rig ('labrig "
    "calibrate-rig --rig NAME --capture-attempt ID', from a rig recording of the board), then "
    "record the attempt again"
)
NO_MARKERS = (
    "no marker was seen by two cameras at once: nothing to triangulate. Check that the markers "
    "are in view of at least two cameras and lit"
)


def make_templates(seed: int, count: int, points: int) -> list[Template]:
    gen = np.random.default_rng(seed)
    times = [round(i / 30.0, 9) for i in range(points)]
    t = np.asarray(times)
    colours = ([230, 40, 40], [40, 200, 60], [40, 90, 230])
    templates = []
    for _ in range(count):
        markers = []
        for m in range(int(gen.integers(1, 4))):
            speed = gen.uniform(500.0, 1500.0)  # mm/s along the walkway
            x = gen.uniform(-1500.0, -500.0) + speed * t
            y = gen.uniform(-250.0, 250.0) + gen.normal(0.0, 1.5, points)
            z = gen.uniform(600.0, 1200.0) + 20.0 * np.sin(2 * np.pi * 1.8 * t + gen.uniform(0, 6))
            error = np.round(np.abs(gen.normal(0.55, 0.2, points)), 4)
            # which cameras solved each point: bit k for camera k
            views = [
                7 if gen.random() < 0.85 else int(gen.choice([3, 5, 6])) for _ in range(points)
            ]
            markers.append(
                {
                    "track_id": m,
                    "colour_rgb": colours[m],
                    "members": [{"camera": p, "track_id": m} for p in PLACES],
                    "instants": list(range(points)),
                    "xyz": np.round(np.column_stack([x, y, z]), 4).tolist(),
                    "error_px": error.tolist(),
                    "views": views,
                    "frames": points,
                    "gaps": [],
                    "gap_instants": 0,
                    "two_camera_share": sum(1 for v in views if v != 7) / points,
                    "error_rms_px": float(np.sqrt(np.mean(error * error))),
                    "error_p95_px": float(np.percentile(error, 95)),
                    "cameras_used": {
                        p: sum(1 for v in views if v >> k & 1) for k, p in enumerate(PLACES)
                    },
                }
            )
        errors = np.concatenate([np.asarray(m["error_px"]) for m in markers])
        reconstruction = {
            "cameras": list(PLACES),
            "instants": points,
            "markers": markers,
            "unmatched_tracks": [],
            "error_rms_px": float(np.sqrt(np.mean(errors * errors))),
            "error_p95_px": float(np.percentile(errors, 95)),
            "settings": {
                "max_epipolar_px": 4.0,
                "min_shared": 5,
                "max_view_error_px": 2.0,
                "refine": True,
            },
        }
        tracks = markers_kinematics(markers, times, 0.25)
        templates.append(Template(times, reconstruction, tracks))
    return templates


def qc_json(frames: int, fps: float, dropped: int) -> dict[str, Any]:
    """A media.qc report of one camera, as MediaQC.to_json writes it: the frames written all
    decode; frames dropped while recording show as one timestamp gap."""
    return {
        "files": [
            {
                "name": SEGMENT_NAME,
                "header_frames": frames,
                "decoded_frames": frames,
                "timestamp_rows": frames,
                "undecodable": False,
            }
        ],
        "decoded_frames": frames,
        "expected_frames": frames,
        "expected_fps": fps,
        "gaps": 1 if dropped else 0,
        "missing_frames": dropped,
        "largest_interval_s": round((1 + dropped) / fps, 6),
        "blur": {"min": 41.2, "median": 88.5, "max": 131.0, "flagged": 0},
        "brightness": {"min": 92.1, "median": 118.4, "max": 140.2, "flagged": 0},
        "clipped": {"min": 0.0, "median": 0.001, "max": 0.004, "flagged": 0},
        "thresholds": {
            "blur_min": 0.0,
            "blur_relative": 0.5,
            "dark_mean": 15.0,
            "clipped_max": 0.05,
            "gap_factor": 1.5,
        },
        "undecodable": False,
        "header_mismatch": False,
        "count_mismatch": False,
        "problems": [f"1 timestamp gap(s), about {dropped} frame(s) missing"] if dropped else [],
    }


def blocked_reason(rng: random.Random, a: Draft, stage_id: str) -> tuple[str, str]:
    """The code and reason of a stage a quality gate stopped, in the stage's own words."""
    if stage_id == "rig.sync":
        return "LABRIG_SYNC_UNMATCHED", (
            f"only {a.sync['frame_sets']} of {a.sync['instants']} instants have a frame from "
            f"every camera, under {SYNC_DEFAULTS['min_matched_fraction']:.0%}: the cameras "
            "were not recording together. Check each camera's connection and record the rig "
            "again"
        )
    if stage_id == "media.qc":
        device = rng.choice(a.captures).device.device_id
        return "LABRIG_MEDIA_UNDECODABLE", (
            f"{device}: {SEGMENT_NAME} could not be decoded (missing, damaged or not a video)"
        )
    if stage_id == "tracking.rig":
        if rng.random() < 0.7:
            return "LABRIG_NO_RIG_CALIBRATION", NO_RIG_CALIBRATION
        return "LABRIG_RIG_TOO_FEW_CAMERAS", (
            "3-D needs two or more calibrated cameras; this attempt has 1 in rig calibration "
            f"{a.calibration[:12]} (left: not in the rig calibration; right: not in the rig "
            "calibration)"
        )
    return "LABRIG_TOO_FEW_MARKERS", NO_MARKERS


def degraded_reasons(rng: random.Random, a: Draft, stage_id: str) -> list[str]:
    """Why a stage's output is degraded, in the stage's own words."""
    if stage_id == "rig.sync":
        fraction = SYNC_DEFAULTS["max_spread_fraction"]
        return [
            f"the cameras' frames are up to {a.sync['spread_ms']['p99']:.1f} ms apart at p99, "
            f"over {fraction:g} of a frame interval "
            f"({fraction * a.sync['frame_interval_ms']:.1f} ms): 3-D positions of fast "
            "movements are less exact"
        ]
    if stage_id == "media.qc":
        # lost: dropped while recording, and missing between the timestamps
        return [
            f"{c.device.device_id}: {2 * c.dropped} frames were dropped during recording "
            f"(over 1% of {c.frames})"
            for c in a.captures
            if c.dropped
        ]
    marker = rng.choice(a.template.reconstruction["markers"])["track_id"]
    if rng.random() < 0.5:
        return [
            f"marker {marker} was seen by only two cameras in {rng.uniform(0.51, 0.8):.0%} of "
            "its frames (over 50%): its depth is less certain. Add a camera where it is "
            "hidden, or keep it in view of more"
        ]
    return [
        f"marker {marker}'s reprojection error is {rng.uniform(1.6, 3.2):.2f} px at p95 (over "
        "1.5 px): check the rig calibration is current, and that markers do not merge in one "
        "camera's picture"
    ]


def stage_output(a: Draft, stage_id: str, reasons: list[str]) -> dict[str, Any]:
    """A stage's committed output document, its ``degraded_reasons`` included."""
    body: dict[str, Any]
    if stage_id == "rig.sync":
        body = {"sync": a.sync}
    elif stage_id == "media.qc":
        checked = [
            {"capture_id": c.id, "qc": qc_json(c.frames, c.device.fps, c.dropped)}
            for c in a.captures
        ]
        body = dict(checked[0]) | {"cameras": checked}
    elif stage_id == "tracking.rig":
        # each camera's tracking summary; its 2-D tracks are left out (size)
        tracks: dict[str, Any] = {
            "expected_markers": None,
            "fraction_expected": 1.0,
            "undistorted": True,
            "tracks": [],
        }
        body = {
            "rig_calibration_id": a.calibration,
            "cameras": [
                {
                    "camera": c.place,
                    "capture_id": c.id,
                    "manifest_sha256": c.manifest,
                    "tracks": tracks
                    | {"frames_processed": c.frames, "frames_with_expected": c.frames},
                }
                for c in a.captures
            ],
        }
    elif stage_id == "reconstruction.3d":
        body = {
            "rig_calibration_id": a.calibration,
            "world": None,
            "times_s": a.template.times_s,
            "reconstruction": a.template.reconstruction,
        }
    else:
        body = {
            "rig_calibration_id": a.calibration,
            "units": {"length": "mm", "time": "s"},
            "tracks": a.template.tracks,
        }
    return body | {"degraded_reasons": reasons}
