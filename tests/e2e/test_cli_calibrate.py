"""``labrig calibrate`` as a technician runs it, on PNGs and an MJPG AVI of the
virtual camera's board."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from labrig.capture.virtual import VirtualCamera

REPO = Path(__file__).resolve().parents[2]
FRAMES = range(0, 900, 45)  # 20 poses spread over the board's trajectory
BOARD = ("--board", "chessboard:9x6:25")


def labrig(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "labrig", "calibrate", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )


@pytest.fixture(scope="module")
def pngs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder, camera = tmp_path_factory.mktemp("views"), VirtualCamera("board", paced=False)
    paths = [folder / f"view_{i:04d}.png" for i in FRAMES]
    for i, path in zip(FRAMES, paths, strict=True):
        cv2.imwrite(str(path), camera.render(i))
    return paths


def test_images_calibrate_and_validate_with_a_readable_report(
    pngs: list[Path], tmp_path: Path
) -> None:
    rippled = tmp_path / "rippled.png"
    image = cv2.imread(str(pngs[6]))
    y, x = np.mgrid[0:720, 0:1280].astype(np.float32)
    cv2.imwrite(
        str(rippled),
        cv2.remap(image, x + 3 * np.sin(y / 19.1), y + 3 * np.sin(x / 19.1), cv2.INTER_LINEAR),
    )
    result = labrig(*pngs[:6], rippled, *pngs[7:], *BOARD)
    out = result.stdout
    assert result.returncode == 0, result.stderr + out
    for expected in (
        "Intrinsics:  fx 99",
        "Distortion:  k1 -0.05",
        "RMS:         0.0",
        "Coverage:    4",
        "Per-view RMS error (px):",
        "view_0000.png",
        "Rejected:    rippled.png",
        "Verdict:     VALID",
    ):
        assert expected in out, out


def test_json_output_and_device_binding(pngs: list[Path]) -> None:
    result = labrig(*pngs, *BOARD, "--json", "--device", "SN1234", "--mode", "1280x720@30:BGR")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (
        doc["schema"] == "labrig.calibration/2" and doc["valid"] is True and doc["view_count"] == 20
    )
    assert (
        doc["source"] is None
        and len(doc["views"][0]["corners"]) == len(doc["views"][0]["ids"]) == 54
    )
    assert (
        abs(doc["fx"] / 1000 - 1) < 0.005 and abs(doc["cx"] - 639.5) < 2 and doc["rejected"] == []
    )
    assert doc["binding"]["device_id"] == "SN1234"
    assert (
        doc["binding"]["calibration_id"] == doc["calibration_id"]
        and len(doc["calibration_id"]) == 64
    )


def test_a_result_below_the_thresholds_exits_1_and_says_why(pngs: list[Path]) -> None:
    result = labrig(
        *pngs,
        *BOARD,
        "--max-rms",
        "0.01",
        "--min-coverage",
        "0.9",
        "--device",
        "SN1",
        "--mode",
        "1280x720@30:BGR",
    )
    assert result.returncode == 1
    assert "Verdict:     NOT VALID (not bound to SN1)" in result.stdout
    assert "LABRIG_RMS_TOO_HIGH" in result.stdout and "LABRIG_COVERAGE_TOO_LOW" in result.stdout


def test_a_video_is_sampled_every_nth_frame(tmp_path: Path) -> None:
    video, camera = tmp_path / "calibration.avi", VirtualCamera("board", paced=False)
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (1280, 720))
    for j in range(100):
        writer.write(camera.render(j * 9))  # every 5th video frame is one of FRAMES
    writer.release()
    result = labrig(video, "--board", "virtual-9x6-25", "--every", "5", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["view_count"] == 20 and doc["views"][1]["name"] == "calibration.avi#5"
    assert abs(doc["fx"] / 1000 - 1) < 0.005 and doc["board"]["name"] == "virtual-9x6-25"


def test_refusals_exit_2_with_their_code(pngs: list[Path], tmp_path: Path) -> None:
    text, blank = tmp_path / "notes.png", tmp_path / "blank.png"
    text.write_text("not an image", encoding="utf-8")
    cv2.imwrite(str(blank), np.full((720, 1280, 3), 128, np.uint8))
    # each run costs a CLI start-up; bad --board specs and the rest are covered in
    # tests/integration/analysis
    cases = [
        ((text, *BOARD), "LABRIG_IMAGE_UNREADABLE"),
        ((blank, *BOARD), "LABRIG_BOARD_NOT_FOUND"),
        ((*pngs[:3], *BOARD), "LABRIG_TOO_FEW_VIEWS"),
    ]
    for args, code in cases:
        result = labrig(*args)
        assert result.returncode == 2 and f"labrig: {code}: " in result.stderr, (
            code,
            result.stderr,
        )


def test_a_valid_calibration_is_stored_for_the_device_with_its_plane_scale(tmp_path: Path) -> None:
    import json as _json
    import os as _os
    import subprocess as _sp
    import sys as _sys

    import cv2

    from labrig.calibration.stored import current_calibration
    from labrig.calibration.views import load_calibration_detail
    from labrig.capture.sources import Mode
    from labrig.capture.virtual import VirtualCamera
    from labrig.store import open_store

    mode = Mode(1280, 720, 30.0)
    board = VirtualCamera("board")
    board.open(mode)
    video = tmp_path / "board.avi"
    writer = cv2.VideoWriter(
        str(video), cv2.CAP_FFMPEG, cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (1280, 720)
    )
    for i in range(0, 600, 30):
        writer.write(board.render(i))
    writer.release()
    plane = VirtualCamera("plane")
    plane.open(mode)
    cv2.imwrite(str(tmp_path / "plane.png"), plane.render(0))
    store = tmp_path / "store"

    def labrig(*args: str) -> _sp.CompletedProcess[str]:
        return _sp.run(
            [_sys.executable, "-m", "labrig", "--store", str(store), *args],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=REPO,
            env=_os.environ | {"QT_QPA_PLATFORM": "offscreen"},
        )

    imported = labrig("import", str(video))
    assert imported.returncode == 0, imported.stderr
    [capture] = [_json.loads(line) for line in labrig("captures", "--json").stdout.splitlines()]
    no_mode = labrig(
        "calibrate",
        "--capture",
        capture["id"],
        "--board",
        "chessboard:9x6:25",
        "--device",
        "virtual:markers",
    )
    assert no_mode.returncode == 2 and "--device needs --mode" in no_mode.stderr
    done = labrig(
        "calibrate",
        "--capture",
        capture["id"],
        "--every",
        "1",
        "--board",
        "chessboard:9x6:25",
        "--device",
        "virtual:markers",
        "--mode",
        "1280x720@30:BGR",
        "--plane",
        str(tmp_path / "plane.png"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    opened = open_store(store)
    stored = current_calibration(opened, "virtual:markers", "1280x720@30 BGR")
    source = load_calibration_detail(opened, stored.id).source if stored else None
    opened.close()
    assert stored is not None and stored.plane_homography is not None
    # its frames can be shown
    assert source is not None and (source.capture_id, source.every) == (capture["id"], 1)
    assert abs(stored.camera_matrix[0, 0] / 1000 - 1) < 0.005
    names = [_json.loads(line)["name"] for line in labrig("events", "--json").stdout.splitlines()]
    assert "calibration.validated" in names
