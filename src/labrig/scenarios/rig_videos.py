"""Videos of the virtual rig as separate devices would record them: each camera started at its own
instant (to the microsecond, not to a frame), with no clock shared; for post-hoc sync (its tests,
and the release health check's)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import cv2

from labrig.capture.rig_camera import CameraTiming, VirtualRig
from labrig.capture.rig_world import FLASH_GAIN, RigSceneName
from labrig.capture.sources import Mode

VIDEO_MODE = Mode(640, 360, 30.0)


def write_rig_videos(
    folder: Path,
    starts_s: Sequence[float],
    seconds: float,
    scene: RigSceneName = "flash",
    mode: Mode = VIDEO_MODE,
    gain: float = FLASH_GAIN,
) -> list[Path]:
    """One MJPG video per start (world seconds): camera k's, from ``starts_s[k]`` for ``seconds``.
    The true offset of camera k against camera 0 is ``starts_s[k] - starts_s[0]``."""
    period = 1 / mode.fps
    # each camera's sensor phase puts a frame exactly at its start
    timing = {
        k: CameraTiming(offset_ms=(s - math.floor(s / period) * period) * 1e3)
        for k, s in enumerate(starts_s)
    }
    rig = VirtualRig(scene=scene, timing=timing, flash_gain=gain)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, start in enumerate(starts_s):
        camera = rig.camera(k)
        camera.open(mode)
        first = math.floor(start / period + 1e-9)
        path = folder / f"camera-{k + 1}.avi"
        writer = cv2.VideoWriter(
            str(path), cv2.VideoWriter.fourcc(*"MJPG"), mode.fps, (mode.width, mode.height)
        )
        for n in range(first, first + round(seconds * mode.fps)):
            writer.write(camera.render(n))
        writer.release()
        if not path.is_file() or path.stat().st_size == 0:
            raise OSError(f"{path} was not written")
        paths.append(path)
    return paths
