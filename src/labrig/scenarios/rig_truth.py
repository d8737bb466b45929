"""The virtual rig's ground truth, for checks of the 3-D stages alone: a rig calibration holding the
cameras' true lenses and poses (stored as the catalog stores any, bound to the rig), and where
every marker truly was at each frame a recording kept.

The release health check uses it in its scratch store (so a release's 3-D stages are measured
against the truth, whatever a calibration's own error), the reconstruction tests and the
benchmark too. Never used on a lab's own store."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from labrig.calibration.rig_stored import binding_digest, rig_binding
from labrig.capture import load_capture
from labrig.capture.rig_camera import VirtualRig
from labrig.capture.rig_world import marker_positions, rig_camera
from labrig.capture.rigs import Rig
from labrig.capture.sink import read_sidecar
from labrig.store import Store, utcnow
from labrig.store.models import RigCalibrationRecord


def truth_document(cameras: Sequence[int]) -> dict[str, Any]:
    """A ``labrig.rig-calibration/1`` document of the virtual rig's true cameras (the fields the
    3-D stages read), in the world's own axes (the floor's)."""
    out = []
    for index in cameras:
        spec = rig_camera(index)
        m = spec.model
        out.append(
            {
                "name": spec.place,
                "image_size": [m.width, m.height],
                "camera_matrix": m.matrix().tolist(),
                "distortion": dict(
                    zip(("k1", "k2", "p1", "p2", "k3"), map(float, m.dist()), strict=True)
                ),
                "rotation_vector_rad": [float(v) for v in spec.rvec],
                "translation_mm": [float(v) for v in spec.tvec],
            }
        )
    return {"schema": "labrig.rig-calibration/1", "world": "floor", "cameras": out}


def store_truth_calibration(
    store: Store, rig: Rig, cameras: Sequence[int] | None = None, *, valid: bool = True
) -> str:
    """A rig calibration of ``rig`` holding the true cameras (``cameras``: which of them, by the
    virtual rig's index; all of the rig's by default), valid for 30 days unless ``valid`` is
    false; its id."""
    indices = list(cameras if cameras is not None else range(len(rig.devices)))
    document = truth_document(indices) | {
        "valid": valid,
        "reasons": [] if valid else [{"code": "X", "message": "made invalid on purpose"}],
    }
    binding = rig_binding(rig)
    calibration_id = f"truth-{'-'.join(map(str, indices))}-{valid}-{binding_digest(binding)[:8]}"
    return store_rig_document(store, rig, calibration_id, document, valid=valid)


def store_rig_document(
    store: Store, rig: Rig, calibration_id: str, document: dict[str, Any], *, valid: bool = True
) -> str:
    """``document`` stored as rig calibration ``calibration_id`` of ``rig`` (kept when one of
    that id is there already), valid for 30 days unless ``valid`` is false; its id."""
    binding = rig_binding(rig)
    with store.write() as session:
        if session.get(RigCalibrationRecord, calibration_id) is None:
            session.add(
                RigCalibrationRecord(
                    id=calibration_id,
                    rig_name=rig.name,
                    binding=json.dumps(binding, sort_keys=True),
                    binding_digest=binding_digest(binding),
                    valid=valid,
                    rms_px=0.0,
                    document=json.dumps(document, sort_keys=True),
                    created_at=utcnow(),
                    valid_until=utcnow() + timedelta(days=30) if valid else None,
                )
            )
    return calibration_id


def true_paths(
    store: Store, rig: VirtualRig, manifest_sha256: str, camera: int = 0
) -> npt.NDArray[np.float64]:
    """F×markers×3 world mm: where each marker was at each frame of the capture (the frames'
    tags, read from its sidecar, name the world instants they show)."""
    media = load_capture(store, manifest_sha256)
    rows = [r for p in media.timestamps if p is not None for r in read_sidecar(p)]
    fps = float(media.mode["fps"])
    return np.stack(
        [marker_positions(rig.world_time(camera, fps, int(r[3])), rig.markers) for r in rows]
    )


def matched(
    reconstruction: dict[str, Any], truth: npt.NDArray[np.float64]
) -> dict[int, tuple[int, npt.NDArray[np.float64]]]:
    """For each true marker (by index) a reconstructed marker follows: that marker's id and its
    distance (mm) from the true path at each of its instants. ``reconstruction``: a
    reconstruction.3d output's ``reconstruction``; ``truth``: :func:`true_paths` of its first
    camera."""
    out = {}
    for m in reconstruction["markers"]:
        at = np.asarray(m["instants"], dtype=np.int64)
        d = np.linalg.norm(truth[at] - np.asarray(m["xyz"])[:, None, :], axis=2)
        who = int(np.bincount(d.argmin(axis=1)).argmax())
        out[who] = (int(m["track_id"]), d[:, who])
    return out


def errors_mm(
    reconstruction: dict[str, Any], truth: npt.NDArray[np.float64]
) -> dict[int, npt.NDArray[np.float64]]:
    """Each true marker's reconstruction error (mm) per instant (:func:`matched`)."""
    return {who: err for who, (_, err) in matched(reconstruction, truth).items()}
