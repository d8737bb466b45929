"""Damaged manifests, provisional and committed (issue 16): recovery, ``verify`` and the commands
that read a capture end in a typed answer and change nothing that was committed.

Provisional folders are made as a crashed recording leaves them (a closed segment and its manifest,
written with Labrig's own writer), then damaged the ways the attack on the command line found:
a segment the manifest lists is gone, ``timestamps`` is a number, the manifest names a capture that
is already committed. A good interrupted folder beside them must still be salvaged.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from labrig.capture.manifest import ManifestV1, SegmentV1, write_manifest
from labrig.fsutil import sha256_file
from tests.support.cli import assert_typed, labrig, store_with_a_capture, write_video


def _interrupted(store: Path, *, segments: int = 1, capture_id: str | None = None) -> Path:
    """A provisional folder as a crash leaves it: ``segments`` closed segments, none open."""
    capture_id = capture_id or str(uuid.uuid4())
    folder = store / "captures" / "provisional" / capture_id
    folder.mkdir(parents=True)
    closed = []
    for n in range(segments):
        name = f"seg-{n:05d}.avi"
        # bytes of its own: a segment equal to another folder's would be found in the media store
        write_video(folder / name, frames=10, seed=uuid.UUID(capture_id).int % 10_000 + n)
        digest, size = sha256_file(folder / name)
        closed.append(SegmentV1(name, "", 10, digest, size, n * 10, n * 10 + 9))
    manifest = ManifestV1(
        capture_id,
        None,
        {"device_id": "virtual:markers"},
        {"width": 96, "height": 64, "fps": 25.0, "pixel_format": "MJPG"},
        {},
        "2026-12-02T07:00:00+00:00",
        60.0,
        segments=tuple(closed),
    )
    write_manifest(folder, manifest)
    return folder


def _edit(
    folder: Path, change: dict[str, object], segment: dict[str, object] | None = None
) -> None:
    path = folder / "manifest.json"
    data = json.loads(path.read_bytes())
    data.update(change)
    if segment:
        data["segments"][0].update(segment)
    path.write_text(json.dumps(data))


def _captures(store: Path) -> dict[str, str]:
    listed = labrig(store, "captures", "--json")
    assert listed.returncode == 0, listed.stderr
    return {(row := json.loads(line))["id"]: row["state"] for line in listed.stdout.splitlines()}


@pytest.fixture
def committed(tmp_path: Path) -> tuple[Path, str]:
    store, _ = store_with_a_capture(tmp_path)
    [capture_id] = _captures(store)
    return store, capture_id


def test_damaged_interrupted_recordings_are_quarantined_and_the_good_one_beside_them_salvaged(
    committed: tuple[Path, str],
) -> None:
    store, committed_id = committed
    missing = _interrupted(store, segments=2)
    (missing / "seg-00001.avi").unlink()  # listed as closed, and nowhere
    numeric = _interrupted(store)
    _edit(numeric, {}, segment={"timestamps": 7})
    impostor = _interrupted(store)
    _edit(impostor, {"capture_id": committed_id})  # would commit over the committed capture
    good = _interrupted(store, segments=2)

    recovered = labrig(store, "recover", "--json")

    assert_typed(recovered)
    assert recovered.returncode == 0, recovered.stderr
    outcome = {item["capture_id"]: item for item in json.loads(recovered.stdout)}
    assert outcome[good.name]["outcome"] == "salvaged" and outcome[good.name]["frames"] == 20
    for folder, said in (
        (missing, "lacks seg-00001.avi"),
        (numeric, "timestamp file 7"),
        (impostor, f"names capture {committed_id}, not this folder's"),
    ):
        assert outcome[folder.name]["outcome"] == "quarantined", outcome[folder.name]
        assert said in outcome[folder.name]["detail"]
        # kept whole, where the quarantine keeps it: nothing deleted
        assert (store / "captures" / "quarantine" / folder.name / "seg-00000.avi").is_file()
    # the committed capture is untouched and every stored file verifies
    assert _captures(store)[committed_id] == "committed"
    verified = labrig(store, "verify", "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"], verified.stdout


def test_a_committed_manifest_changed_on_disk_is_a_problem_for_verify_and_refused_for_analysis(
    committed: tuple[Path, str],
) -> None:
    store, capture_id = committed
    [manifest] = list((store / "media").rglob("*.json"))
    for damage in (b"[1, 2]", b'{"schema": "labrig.manifest/1"}', b"\xff" * 10):
        manifest.chmod(0o644)
        manifest.write_bytes(damage)

        verified = labrig(store, "verify", "--json")
        assert_typed(verified)
        report = json.loads(verified.stdout)
        assert verified.returncode == 1 and not report["ok"]
        [problem] = [p for p in report["problems"] if p["subject"] == capture_id]
        assert "no longer matches its digest" in problem["problem"]

        calibrated = labrig(
            store, "calibrate", "--board", "chessboard:9x6:25", "--capture", capture_id
        )
        assert_typed(calibrated)
        assert calibrated.returncode == 2 and "LABRIG_MANIFEST_INVALID" in calibrated.stderr
    assert _captures(store)[capture_id] == "committed"
