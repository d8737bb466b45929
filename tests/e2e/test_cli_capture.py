"""``labrig import``, ``captures``, ``verify`` and ``recover`` as a technician or IT
person runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from labrig.bootstrap import bootstrap
from labrig.capture import create_attempt, create_session, import_media
from labrig.cli import main

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


def _video(path: Path, frames: int = 12) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 25.0, (96, 64))
    for i in range(frames):
        writer.write(np.full((64, 96, 3), 20 * i % 255, dtype=np.uint8))
    writer.release()
    return path


def test_import_list_and_verify_then_detect_tampering(tmp_path: Path) -> None:
    store = tmp_path / "store"
    good, bad = _video(tmp_path / "a.avi"), tmp_path / "b.mp4"
    bad.write_bytes(b"nope" * 10)
    result = labrig(store, "import", str(good), str(bad))
    assert result.returncode == 1  # one refused
    assert (
        "imported " in result.stdout
        and "refused " in result.stdout
        and "LABRIG_NOT_MEDIA" in result.stdout
    )
    [capture] = [
        json.loads(line) for line in labrig(store, "captures", "--json").stdout.splitlines()
    ]
    assert (
        capture["state"] == "committed"
        and capture["frames"] == 12
        and capture["origin"] == "imported"
    )
    ok = labrig(store, "verify", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["ok"] is True
    blob = next((store / "media").rglob("*.avi"))
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0x01  # one flipped bit on disk
    blob.write_bytes(bytes(data))
    broken = labrig(store, "verify")
    assert (
        broken.returncode == 1 and "MISMATCH" in broken.stdout and blob.name[:64] in broken.stdout
    )


def test_recover_after_a_killed_recording(tmp_path: Path) -> None:
    store = tmp_path / "store"
    child = [
        sys.executable,
        "-m",
        "tests.integration.recording.record_child",
        str(store),
        "--frames",
        "30",
        # 1 s of the camera, whatever the load: rename 4 closes its third segment
        "--kill-at-rename",
        "4",
    ]
    assert subprocess.run(child, cwd=REPO, timeout=60, capture_output=True).returncode == -9
    result = labrig(store, "recover")
    assert result.returncode == 0 and "salvaged" in result.stdout
    assert labrig(store, "recover").stdout.strip() == "Nothing to recover."
    [capture] = [
        json.loads(line) for line in labrig(store, "captures", "--json").stdout.splitlines()
    ]
    assert capture["state"] == "salvaged" and capture["frames"] > 0


def test_watch_ingests_a_dropped_file_and_rejects_a_missing_folder(tmp_path: Path) -> None:
    store, drop = tmp_path / "store", tmp_path / "drop"
    drop.mkdir()
    env = os.environ | {"QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "labrig",
            "--store",
            str(store),
            "watch",
            str(drop),
            "--seconds",
            "20",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("Watching ")
    _video(drop / "trial.avi", frames=9)
    line = proc.stdout.readline()
    proc.terminate()
    proc.wait(timeout=30)
    assert "trial.avi: capture " in line and "(9 frames)" in line
    missing = labrig(store, "watch", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "is not a folder" in missing.stderr


def test_captures_a_page_at_a_time_with_filters_and_the_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "store")

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["--store", store, *args])
        out, err = capsys.readouterr()
        return code, out, err

    videos = [str(_video(tmp_path / f"v{i}.avi", frames=4 + i)) for i in range(4)]
    for video in videos:  # one at a time: each capture its own start
        assert run("import", video)[0] == 0
    code, out, _err = run("captures", "--json")
    every = [json.loads(line) for line in out.splitlines()]
    assert [c["frames"] for c in every] == [4, 5, 6, 7]  # oldest first
    code, out, _err = run("captures", "--newest-first", "--limit", "2", "--offset", "1")
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == [every[2]["id"], every[1]["id"]]
    assert lines[-1] == "Captures 2–3 of 4."
    device = every[0]["device_id"]
    code, out, _err = run("captures", "--state", "committed", "--device", device, "--json")
    assert [json.loads(line)["id"] for line in out.splitlines()] == [
        c["id"] for c in every if c["device_id"] == device
    ]
    code, out, _err = run("captures", "--state", "provisional")
    assert code == 0 and out.strip() == "No capture matches."
    code, out, err = run("captures", "--limit", "0")
    assert code == 2 and "LABRIG_USAGE" in err and out == ""
    code, out, _err = run("captures", "--until", "7d")  # all started today
    assert out.strip() == "No capture matches."
    code, out, _err = run("captures", "--since", "7d", "--limit", "3")
    assert out.splitlines()[-1] == "Captures 1–3 of 4."


def test_sessions_a_page_at_a_time_with_their_attempts_and_a_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "store"
    services = bootstrap(root)
    try:
        made = []
        for i, (subject, protocol) in enumerate(
            [("S0001", "gait"), ("S0002", "reach-left"), ("P0100", "gait")]
        ):
            session_id = create_session(services.queue, subject, protocol, "ana")
            made.append(session_id)
            for n in range(i + 1):  # 1, 2 and 3 attempts
                video = _video(tmp_path / f"s{i}-{n}.avi", frames=4 + n + 3 * i)
                capture = import_media(services.store, video, session_id=session_id)
                create_attempt(services.queue, session_id, [capture.capture_id])
    finally:
        services.close()

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["--store", str(root), *args])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _err = run("sessions", "--json")
    every = [json.loads(line) for line in out.splitlines()]
    assert [s["id"] for s in every] == made  # oldest first
    assert [(s["subject_code"], s["attempts"]) for s in every] == [
        ("S0001", 1),
        ("S0002", 2),
        ("P0100", 3),
    ]
    code, out, _err = run("sessions", "--newest-first", "--limit", "2")
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == [made[2], made[1]]
    assert "3 attempts  P0100  gait  ana" in lines[0]
    assert lines[-1] == "Sessions 1–2 of 3."
    code, out, _err = run("sessions", "--search", "s00", "--json")  # letter case ignored
    assert [json.loads(line)["id"] for line in out.splitlines()] == made[:2]
    code, out, _err = run("sessions", "--search", "GAIT", "--json")  # a protocol's start
    assert [json.loads(line)["id"] for line in out.splitlines()] == [made[0], made[2]]
    code, out, _err = run("sessions", "--search", "nobody")
    assert code == 0 and out.strip() == "No session matches."
    code, out, _err = run("sessions", "--until", "7d")  # all begun today
    assert out.strip() == "No session matches."
    code, out, err = run("sessions", "--offset", "-1")
    assert code == 2 and "LABRIG_USAGE" in err and out == ""
