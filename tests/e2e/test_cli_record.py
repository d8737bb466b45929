"""``labrig devices`` and ``labrig record`` on the virtual camera and on a real HTTP
camera on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.mjpeg_server import MjpegServer

REPO = Path(__file__).resolve().parents[2]


def labrig(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "labrig", "--store", str(store), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )


def test_devices_lists_and_verifies_the_virtual_cameras(tmp_path: Path) -> None:
    result = labrig(tmp_path, "devices", "--verify", "--mode", "640x480@30", "--json")
    assert result.returncode == 0, result.stderr
    rows = {r["device_id"]: r for r in json.loads(result.stdout)["devices"]}
    assert rows["virtual:markers"]["verified"] is True
    assert abs(rows["virtual:markers"]["measured_fps"] - 30) < 3
    refused = labrig(tmp_path, "devices", "--verify", "--mode", "800x600@30")
    assert "REFUSED LABRIG_MODE_UNSUPPORTED" in refused.stdout


def test_record_the_virtual_camera(tmp_path: Path) -> None:
    result = labrig(
        tmp_path,
        "record",
        "--device",
        "virtual:markers",
        "--seconds",
        "1.5",
        "--mode",
        "640x480@30",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout[result.stdout.index("{\n") :])
    assert summary["state"] == "committed" and 38 <= summary["frames"] <= 52
    names = [
        json.loads(line)["name"]
        for line in labrig(tmp_path, "events", "--json").stdout.splitlines()
    ]
    assert names == ["capture.device.connected", "capture.started", "capture.committed"]


def test_record_an_ip_camera_and_refuse_an_unknown_device(tmp_path: Path) -> None:
    with MjpegServer(fps=30.0, size=(640, 480)) as camera:
        result = labrig(
            tmp_path,
            "record",
            "--ip",
            camera.url,
            "--device",
            f"ip:{camera.url}",
            "--seconds",
            "1.5",
            "--mode",
            "640x480@30",
        )
    assert result.returncode == 0, result.stderr
    assert "Saved capture" in result.stdout
    [capture] = [
        json.loads(line) for line in labrig(tmp_path, "captures", "--json").stdout.splitlines()
    ]
    assert capture["state"] == "committed" and capture["frames"] >= 30
    missing = labrig(tmp_path, "record", "--device", "uvc:nothing", "--seconds", "1")
    assert missing.returncode == 2 and "LABRIG_DEVICE_NOT_FOUND" in missing.stderr


def test_bad_mode_and_a_recording_that_cannot_fit_are_refused(tmp_path: Path) -> None:
    bad = labrig(
        tmp_path, "record", "--device", "virtual:markers", "--seconds", "1", "--mode", "big"
    )
    assert bad.returncode == 2 and "WIDTHxHEIGHT@FPS" in bad.stderr
    huge = labrig(
        tmp_path,
        "record",
        "--device",
        "virtual:markers",
        "--seconds",
        "99999999",
        "--mode",
        "1920x1080@30",
    )
    assert huge.returncode == 2 and "LABRIG_STORAGE_INSUFFICIENT" in huge.stderr
    assert labrig(tmp_path, "captures").stdout.strip() == "No captures."
