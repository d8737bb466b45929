"""The virtual rig's ground truth for reconstruction tests: a rig calibration holding the cameras'
true lenses and poses (stored as the catalog stores any, bound to the rig), and the true position of
every marker at each frame a recording's first camera kept."""

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
    out = []
    for index in cameras:
        spec = rig_camera(index)
        m = spec.model
        d = m.dist()
        out.append(
            {
                "name": spec.place,
                "image_size": [m.width, m.height],
                "camera_matrix": m.matrix().tolist(),
                "distortion": dict(zip(("k1", "k2", "p1", "p2", "k3"), map(float, d), strict=True)),
                "rotation_vector_rad": [float(v) for v in spec.rvec],
                "translation_mm": [float(v) for v in spec.tvec],
            }
        )
    return {"schema": "labrig.rig-calibration/1", "world": "floor", "cameras": out}


def store_truth_calibration(
    store: Store, rig: Rig, cameras: Sequence[int] | None = None, *, valid: bool = True
) -> str:
    """A rig calibration of ``rig`` holding the true cameras (``cameras``: which of them; all by
    default); its id."""
    indices = list(cameras if cameras is not None else range(len(rig.devices)))
    document = truth_document(indices) | {
        "valid": valid,
        "reasons": [] if valid else [{"code": "X", "message": "made invalid by the test"}],
    }
    binding = rig_binding(rig)
    calibration_id = f"truth-{'-'.join(map(str, indices))}-{valid}"
    with store.write() as session:
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
