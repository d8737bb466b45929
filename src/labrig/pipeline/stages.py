"""The default analysis pipeline as registered queue stages: media.qc →
tracking.markers → kinematics, after rig.sync for an attempt recorded by a rig; for a rig with a
rig calibration, rig.sync → media.qc → tracking.rig → reconstruction.3d → kinematics.3d
(``rig_stages.py``).

Here each stage is declared: its id, version, settings and their defaults. What a stage computes
is in ``stage_runs.py`` (and ``rig_runs.py`` for the rig's 3-D stages), imported when a job of it
first runs: a window or a worker that runs none does not load numpy, OpenCV or the calibrations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

from labrig.domain.recordings import SYNC_DEFAULTS
from labrig.jobs import NO_MODEL_DIGEST, Setting, Stage, StageContext, StageOutput, in_range
from labrig.pipeline import rig_stages
from labrig.pipeline.stage_support import MARKER_SETTINGS, WINDOW_S
from labrig.store import Store

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


def _imported_run(store: Store, run: str) -> Callable[[StageContext], StageOutput]:
    """The computation ``run`` (``module.function`` of this package) of a stage bound to
    ``store``, its module imported when a job of the stage first runs."""
    module, _, name = run.rpartition(".")

    def compute(ctx: StageContext) -> StageOutput:
        found: Callable[[Store, StageContext], StageOutput] = getattr(
            import_module(f"labrig.pipeline.{module}"), name
        )
        return found(store, ctx)

    return compute


def analysis_stages(store: Store, release_digest: str = NO_MODEL_DIGEST) -> tuple[Stage, ...]:
    """The default pipeline's stages, bound to ``store`` (where they read media and calibrations).

    ``release_digest``: the active release's manifest digest, which enters every job's
    idempotency key. ``run`` names the stage's computation as ``module.function`` of this package.
    """

    def stage(
        stage_id: str,
        run: str,
        defaults: Mapping[str, Any],
        schema: Mapping[str, Setting],
        description: str,
        schema_version: int = 1,
    ) -> Stage:
        return Stage(
            stage_id,
            schema_version,
            True,
            _imported_run(store, run),
            model_manifest_digest=release_digest,
            config_defaults=defaults,
            config_schema=schema,
            description=description,
        )

    return (
        stage(
            "rig.sync",
            "stage_runs.rig_sync",
            SYNC_DEFAULTS,
            SYNC_SCHEMA,
            "a rig's cameras matched frame by frame: spread, unmatched frames, drift",
        ),
        # version 2: the captures counted are the attempt's own (version 1 counted the outputs
        # of the jobs it waits on too, a rig's sync), and every_camera: a new key for new text
        stage(
            "media.qc",
            "stage_runs.media_qc",
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
            "stage_runs.tracking",
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
            "stage_runs.kinematics",
            KINEMATICS_DEFAULTS,
            KINEMATICS_SCHEMA,
            "positions in mm and s through the calibration plane; Savitzky-Golay speeds",
            schema_version=2,
        ),
        stage(
            "tracking.rig",
            "rig_runs.rig_tracking",
            rig_stages.RIG_TRACKING_DEFAULTS,
            rig_stages.RIG_TRACKING_SCHEMA,
            "markers tracked in every camera of a calibrated rig, each through its own lens",
        ),
        stage(
            "reconstruction.3d",
            "rig_runs.reconstruction",
            rig_stages.RECONSTRUCTION_DEFAULTS,
            rig_stages.RECONSTRUCTION_SCHEMA,
            "markers matched across cameras (epipolar distance) and triangulated in world mm",
        ),
        stage(
            "kinematics.3d",
            "rig_runs.kinematics_3d",
            rig_stages.KINEMATICS_3D_DEFAULTS,
            rig_stages.KINEMATICS_3D_SCHEMA,
            "3-D paths in mm and s; Savitzky-Golay speeds",
        ),
    )
