"""Hostile manifests and a network camera that dies mid-recording: typed refusals, nothing lost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from labrig.capture.manifest import MANIFEST_NAME, ManifestError, read_manifest
from labrig.capture.opencv_source import OpenCVSource
from labrig.capture.recorder import Recorder, provisional_root
from labrig.capture.recovery import quarantine_root, recover
from labrig.capture.sources import Mode
from labrig.store import Store
from tests.integration.recording.conftest import VIRTUAL, wait_for_frames
from tests.support.mjpeg_server import MjpegServer


def _killed_capture(store: Store) -> Path:
    """A provisional capture as a crash leaves it: manifest written, a few segments closed."""
    child = [
        sys.executable,
        "-m",
        "tests.integration.recording.record_child",
        str(store.root),
        "--kill-at-rename",
        "6",
    ]
    subprocess.run(
        child, cwd=Path(__file__).resolve().parents[3], timeout=60, capture_output=True, check=False
    )
    [folder] = list(provisional_root(store).iterdir())
    return folder


@pytest.mark.parametrize(
    "hostile",
    [
        "../../etc/passwd",
        "/etc/shadow",
        "seg-00000.avi/../../x",
        "CON",
        "\\\\server\\share\\seg-00000.avi",
        "seg-1.avi",
    ],
)
def test_a_manifest_naming_files_outside_its_folder_is_refused(
    tmp_path: Path, hostile: str
) -> None:
    folder = tmp_path / "cap"
    folder.mkdir()
    manifest = {
        "schema": "labrig.manifest/1",
        "capture_id": "c",
        "session_id": None,
        "device": {},
        "mode": {},
        "verification": {},
        "started_utc": "2026-11-29T00:00:00+00:00",
        "segment_seconds": 1.0,
        "segments": [
            {
                "name": hostile,
                "timestamps": "seg-00000.ts.csv",
                "frames": 1,
                "sha256": "0" * 64,
                "bytes": 1,
                "first_mono_ns": 0,
                "last_mono_ns": 0,
            }
        ],
        "open_segment": None,
        "dropped_frames": 0,
        "stopped_utc": None,
    }
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(ManifestError) as info:
        read_manifest(folder)
    assert info.value.code == "LABRIG_MANIFEST_INVALID" and "refused" in info.value.message


def test_recovery_quarantines_a_tampered_manifest_and_deletes_nothing(store: Store) -> None:
    folder = _killed_capture(store)
    path = folder / MANIFEST_NAME
    data = json.loads(path.read_text())
    data["segments"][0]["name"] = "../../../outside.avi"
    path.write_text(json.dumps(data))
    files = sorted(p.name for p in folder.iterdir() if p.name != ".lock")
    [item] = recover(store).items
    assert item.outcome == "quarantined"
    kept = sorted(
        p.name for p in (quarantine_root(store) / folder.name).iterdir() if p.name != ".lock"
    )
    assert kept == files
    assert not (provisional_root(store) / folder.name).exists()


def test_an_ip_camera_that_dies_mid_recording_ends_it_with_every_frame_received(
    store: Store,
) -> None:
    with MjpegServer(fps=30.0, size=(640, 480)) as camera:
        source = OpenCVSource(camera.url, read_timeout_s=1.0)
        recorder = Recorder(store, source, VIRTUAL, Mode(640, 480, 30.0), segment_seconds=0.5)
        recorder.start()
        wait_for_frames(recorder, 30)  # a second of the camera
        camera.kill()  # the network cable is pulled
        recorder.wait(10)
    status = recorder.status()
    assert "stopped sending frames" in status.stop_reason
    result = recorder.stop()
    assert result.frame_count == status.frames >= 25
