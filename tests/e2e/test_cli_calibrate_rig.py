"""``labrig calibrate-rig`` as a technician runs it: PNG pictures of the virtual rig's board, taken
by three cameras at the same instants, and one of the board lying on the floor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from labrig.calibration.rig_stored import current_rig_calibration
from labrig.capture.rig_camera import rig_device_id
from labrig.capture.rig_world import rig_camera
from labrig.capture.rigs import RigDevice, get_rig, store_rig
from labrig.capture.sources import Mode
from labrig.scenarios.rig_stills import board_stills, floor_stills, write_stills
from labrig.store import open_store

REPO = Path(__file__).resolve().parents[2]
NAMES = ("front", "right", "back")
BOARD = ("--board", "virtual-rig-9x6-80")
MODE = Mode(1280, 720, 30.0)


def run(*args: str | Path, store: Path | None = None) -> subprocess.CompletedProcess[str]:
    at = ["--store", str(store)] if store else []
    return subprocess.run(
        [sys.executable, "-m", "labrig", *at, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )


def labrig(*args: str | Path, store: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run("calibrate-rig", *args, store=store)


def _store_with_trio(store: Path) -> list[RigDevice]:
    """A store at ``store`` holding rig ``trio``: the virtual rig's first three cameras at
    1280x720@30, named front, right, back; its devices."""
    devices = [RigDevice(rig_device_id(i), MODE, name) for i, name in enumerate(NAMES)]
    opened = open_store(store)
    try:
        store_rig(opened, "trio", devices, "tech")
    finally:
        opened.close()
    return devices


@pytest.fixture(scope="module")
def pictures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[list[Path], Path]]:
    folder = tmp_path_factory.mktemp("rig-stills")
    views, floors = board_stills(range(3), 30), floor_stills(range(3))
    out = {}
    for c, name in enumerate(NAMES):
        *board, floor = write_stills(folder / name, [*views[c], floors[c]])
        out[name] = (board, floor)
    return out


def _args(pictures: dict[str, tuple[list[Path], Path]], *extra: str) -> list[str | Path]:
    args: list[str | Path] = [*BOARD]
    for name, (board, floor) in pictures.items():
        args += ["--camera", name, *board, "--floor", f"{name}={floor}"]
    return [*args, *extra]


def test_json_gives_every_camera_in_the_floor_axes_and_every_pair_and_stores_it_for_the_rig(
    pictures: dict[str, tuple[list[Path], Path]], tmp_path: Path
) -> None:
    store = tmp_path / "store"
    _store_with_trio(store)
    # lenient thresholds: 30 pictures of the board crossing the middle of the volume cover a
    # third of each picture (the text test shows what the technician is told by default)
    lenient = ("--min-shared", "2", "--min-coverage", "0.25")
    result = labrig(*_args(pictures, "--json", *lenient, "--rig", "trio"), store=store)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["valid"] is True and doc["reasons"] == []
    assert doc["stored"]["rig"] == "trio" and doc["stored"]["valid_until"]
    opened = open_store(store)
    try:
        current = current_rig_calibration(opened, get_rig(opened, "trio"))
    finally:
        opened.close()
    assert current is not None and current.id == doc["rig_calibration_id"]
    assert doc["schema"] == "labrig.rig-calibration/1" and doc["world"] == "floor"
    assert len(doc["rig_calibration_id"]) == 64
    for c, cam in enumerate(doc["cameras"]):
        assert cam["name"] == NAMES[c]
        off = np.linalg.norm(np.subtract(cam["centre_mm"], rig_camera(c).centre_mm))
        assert off < 5.0, (cam["name"], off)  # mm, 3-5 m away
        assert cam["rms_px"] < 0.3
        keys = {"fx", "fy", "cx", "cy", "distortion", "rotation_vector_rad", "translation_mm"}
        assert keys <= set(cam)
    assert [p["cameras"] for p in doc["pairs"]] == [
        ["front", "right"],
        ["front", "back"],
        ["right", "back"],
    ]


def test_text_report_says_what_failed_and_what_to_do(
    pictures: dict[str, tuple[list[Path], Path]], tmp_path: Path
) -> None:
    plot = tmp_path / "rig.png"
    result = labrig(*_args(pictures, "--plot", str(plot)))
    assert result.returncode == 1, result.stderr
    drawn = cv2.imread(str(plot))
    assert drawn is not None and drawn.shape[1] > drawn.shape[0] > 300  # two views side by side
    out = result.stdout
    assert "world origin and axes: the floor board" in out
    assert "front - right:" in out and "shared views" in out
    assert "Board check: diagonal" in out
    assert "Verdict:     NOT VALID" in out
    assert "LABRIG_RIG_FEW_SHARED_VIEWS: camera front saw the board" in out
    assert "hold the board where cameras front and" in out


def test_refusals_exit_2_with_their_code(
    pictures: dict[str, tuple[list[Path], Path]], tmp_path: Path
) -> None:
    front, right = pictures["front"][0], pictures["right"][0]
    result = labrig(*BOARD, "--camera", "front", *front[:3], "--camera", "right", *right[:2])
    assert result.returncode == 2
    assert "LABRIG_RIG_VIEW_COUNT_MISMATCH" in result.stderr
    result = labrig(
        *BOARD, "--camera", "front", front[0], "--camera", "right", right[0], "--floor", "side=x"
    )
    assert result.returncode == 2
    assert "--floor names side, which no --camera is called" in result.stderr
    result = labrig(*BOARD, "--camera", "front", *front[:3])
    assert result.returncode == 2 and "at least two cameras" in result.stderr
    result = labrig(*_args(pictures, "--rig", "nowhere"), store=tmp_path / "store")
    assert result.returncode == 2 and "there is no rig 'nowhere'" in result.stderr


# ``--capture-attempt`` on a rig recording of the board, and its refusal once the rig has changed,
# are checked on the recordings the Calibration screen's own test makes by clicking
# (tests/ui/test_calibration_rig.py), so the 30 s board is recorded once.
