"""Still pictures of the virtual rig's calibration board, as a technician would take them with
several cameras triggered together: the k-th picture of every camera at the same world instant.
For rig calibration from files (its tests, the benchmark and the release health check)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2

from labrig.calibration.camera import View
from labrig.capture.rig_board import BoardKind
from labrig.capture.rig_camera import VirtualRig
from labrig.capture.sources import Mode

STILL_MODE = Mode(1280, 720, 30.0)
#: world seconds between pictures: the board scene turns once every 9 s, so 30 pictures 1.3 s
#: apart see it from every side
STILL_EVERY_S = 1.3


def board_stills(
    cameras: Sequence[int],
    instants: int,
    kind: BoardKind = "chessboard",
    every_s: float = STILL_EVERY_S,
    mode: Mode = STILL_MODE,
    seed: int = 0,
) -> dict[int, list[View]]:
    """Pictures of the moving board (scene ``board``) by each camera, ``instants`` of them,
    ``every_s`` world seconds apart: camera → views in instant order."""
    return _stills("board", cameras, instants, kind, every_s, mode, seed)


def floor_stills(
    cameras: Sequence[int], kind: BoardKind = "chessboard", mode: Mode = STILL_MODE, seed: int = 0
) -> dict[int, View]:
    """One picture per camera of the board lying on the floor (scene ``floor``)."""
    return {c: views[0] for c, views in _stills("floor", cameras, 1, kind, 1.0, mode, seed).items()}


def _stills(
    scene: str,
    cameras: Sequence[int],
    instants: int,
    kind: BoardKind,
    every_s: float,
    mode: Mode,
    seed: int,
) -> dict[int, list[View]]:
    rig = VirtualRig(scene=scene, board=kind, seed=seed)  # type: ignore[arg-type]
    frame_step = max(1, round(every_s * mode.fps))
    out: dict[int, list[View]] = {}
    for c in cameras:
        cam = rig.camera(c)
        cam.open(mode)
        out[c] = [
            View(f"cam{c + 1}-{scene}-{k:03d}.png", cam.render(k * frame_step).copy())
            for k in range(instants)
        ]
        cam.close()
    return out


def write_stills(folder: Path, views: Sequence[View]) -> list[Path]:
    """Write ``views`` as PNG files in ``folder`` (by their names); the paths, in order."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for view in views:
        path = folder / view.name
        if not cv2.imwrite(str(path), view.image):
            raise OSError(f"could not write {path}")
        paths.append(path)
    return paths
