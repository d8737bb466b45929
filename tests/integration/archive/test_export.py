"""Exporting real published results: the bundle verifies with the real ``sha256sum -c``, carries
the effective and automatic values with the history, and refusals or failures leave nothing that
looks like an export."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labrig.bootstrap import bootstrap
from labrig.domain.roles import RoleRequiredError
from labrig.errors import UsageError
from labrig.export import verify_bundle
from labrig.export.bundle import BlobMissingError
from labrig.export.service import ExportTargetError
from labrig.export.snapshot import NothingToExportError
from labrig.review.revisions import ResultNotPublishedError, UnknownResultError
from labrig.store.blobs import BlobMismatchError
from tests.integration.archive.conftest import Lab


def sha256sum_check(bundle: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"],
        cwd=bundle,
        capture_output=True,
        text=True,
        timeout=60,
    )


def files_under(folder: Path) -> set[str]:
    return (
        {p.relative_to(folder).as_posix() for p in folder.rglob("*")} if folder.exists() else set()
    )


def test_a_bundle_verifies_with_sha256sum_and_carries_its_provenance(
    lab: Lab, tmp_path: Path
) -> None:
    report = lab.services.export.export([lab.published_id[:8]], tmp_path / "out", media=True)
    bundle = report.bundle
    assert bundle.parent == tmp_path / "out" and bundle.name.startswith("labrig-export-")
    assert files_under(tmp_path / "out") == {bundle.name} | {
        f"{bundle.name}/{p}" for p in files_under(bundle)
    }
    checked = sha256sum_check(bundle)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert verify_bundle(bundle).intact

    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["schema"] == "labrig.export/1" and manifest["media"] is True
    assert manifest["audit_chain_head"] == lab.services.governance.audit.head().to_json()
    [listed] = manifest["results"]
    folder = bundle / listed["folder"]
    automatic = (folder / "automatic.json").read_bytes()
    assert hashlib.sha256(automatic).hexdigest() == listed["automatic_digest"]
    assert automatic == lab.services.governance.revisions.automatic_document(lab.published_id)
    assert (folder / "trajectories.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    provenance = json.loads((folder / "provenance.json").read_text())
    [capture] = provenance["captures"]
    media = bundle / manifest["media_folders"][capture["capture_id"]]
    for f in capture["files"]:  # every media file is the stored blob, byte for byte
        assert hashlib.sha256((media / f["name"]).read_bytes()).hexdigest() == f["sha256"]
    assert (
        hashlib.sha256((media / "manifest.json").read_bytes()).hexdigest()
        == capture["manifest_sha256"]
    )
    series = list(csv.DictReader((folder / "series.csv").open()))
    assert {r["track_id"] for r in series} == {"0", "1", "2"}


def test_effective_values_beside_automatic_ones_with_the_history(lab: Lab, tmp_path: Path) -> None:
    revisions = lab.services.governance.revisions
    first = revisions.revise(lab.published_id, {"track:0.peak_speed": 812.5}, "marker 0 occluded")
    second = revisions.revise(lab.published_id, {"track:1.extent": 9}, "board edge")
    report = lab.services.export.export([lab.published_id], tmp_path)
    folder = report.bundle / report.results[0]["folder"]
    rows = {
        (r["track_id"], r["metric"]): r for r in csv.DictReader((folder / "metrics.csv").open())
    }
    automatic = json.loads((folder / "automatic.json").read_text())["metrics"][0]["peak_speed"]
    assert (
        rows["0", "peak_speed"]["effective"] == "812.5"
        and rows["0", "peak_speed"]["revision"] == "1"
    )
    assert float(rows["0", "peak_speed"]["automatic"]) == automatic
    assert rows["1", "extent"]["effective"] == "9.0" and rows["1", "extent"]["revision"] == "2"
    untouched = rows["2", "extent"]
    assert untouched["revision"] == "" and untouched["automatic"] == untouched["effective"]
    document = json.loads((folder / "result.json").read_text())
    assert document["schema"] == "labrig.export.result/1"
    assert [r["id"] for r in document["revisions"]] == [first.id, second.id]
    for number, revision in ((1, first), (2, second)):
        text = (folder / "revisions" / f"revision-{number:03d}.json").read_bytes()
        assert hashlib.sha256(text).hexdigest() == revision.digest
    head = lab.services.governance.audit.head()
    assert (
        head.seq == 2
        and json.loads((report.bundle / "manifest.json").read_text())["audit_chain_head"]
        == head.to_json()
    )
    assert sha256sum_check(report.bundle).returncode == 0


@pytest.mark.parametrize("case", ["blocked", "unknown", "blocked-among-others", "none", "both"])
def test_refusals_write_nothing(lab: Lab, tmp_path: Path, case: str) -> None:
    target = tmp_path / "out"
    refs, everything, error = {
        "blocked": ([lab.blocked_id], False, ResultNotPublishedError),
        "unknown": (["deadbeef"], False, UnknownResultError),
        "blocked-among-others": (
            [lab.published_id, lab.blocked_id[:6]],
            False,
            ResultNotPublishedError,
        ),
        "none": ([], False, UsageError),
        "both": ([lab.published_id], True, UsageError),
    }[case]
    with pytest.raises(error) as refused:
        lab.services.export.export(refs, target, everything=everything)
    assert refused.value.code.startswith("LABRIG_") and refused.value.message
    assert not target.exists()


def test_nothing_published_and_a_file_as_target_are_refused(lab: Lab, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ExportTargetError):
        lab.services.export.export([lab.published_id], tmp_path / "file")
    assert (tmp_path / "file").read_text() == "x"
    empty = bootstrap(tmp_path / "empty")  # a fresh store: nothing published yet
    try:
        with pytest.raises(NothingToExportError) as refused:
            empty.export.export([], tmp_path / "out", everything=True)
    finally:
        empty.close()
    assert refused.value.code == "LABRIG_NOTHING_TO_EXPORT" and not (tmp_path / "out").exists()


def test_exporting_needs_the_reviewer_role_once_roles_are_enforced(
    lab: Lab, tmp_path: Path
) -> None:
    lab.services.governance.access.set_role("ada", "admin", "lab manager")
    lab.services.governance.access.set_role("tom", "technician", "new hire")
    tom = lab.services_as("tom")
    with pytest.raises(RoleRequiredError) as refused:
        tom.export.export([lab.published_id], tmp_path / "out")
    assert "exporting results needs the reviewer role" in refused.value.message
    assert not (tmp_path / "out").exists()
    lab.services.governance.access.set_role("tom", "reviewer", "trained")
    assert tom.export.export([lab.published_id], tmp_path / "out").bundle.exists()


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_a_failed_export_leaves_no_bundle_behind(lab: Lab, tmp_path: Path, damage: str) -> None:
    [media] = [p for p in (lab.root / "media").rglob("*.avi")]
    if damage == "missing":
        media.unlink()
    else:
        data = bytearray(media.read_bytes())
        data[len(data) // 2] ^= 0xFF
        media.write_bytes(bytes(data))
    target = tmp_path / "out"
    with pytest.raises((BlobMissingError, BlobMismatchError)) as failed:
        lab.services.export.export([lab.published_id], target, media=True)
    assert failed.value.code in ("LABRIG_BLOB_MISSING", "LABRIG_BLOB_MISMATCH")
    assert "Nothing was exported" in failed.value.message
    assert list(target.iterdir()) == []  # not even the partial folder


def _export_child(lab: Lab, target: Path) -> subprocess.Popen[bytes]:
    lab.store.close()
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "labrig",
            "--store",
            str(lab.root),
            "export",
            lab.published_id,
            "--to",
            str(target),
            "--media",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )


def test_an_interrupted_export_is_only_a_hidden_partial_folder(lab: Lab, tmp_path: Path) -> None:
    """Killed half-way (here: while copying a media file made 4 GB long, sparse, so copying and
    hashing it takes seconds), an export leaves only ``.labrig-export-….partial``, never a folder
    named like a finished bundle."""
    [media] = [p for p in (lab.root / "media").rglob("*.avi")]
    with open(media, "r+b") as fh:
        fh.truncate(4 << 30)
    target = tmp_path / "out"
    child = _export_child(lab, target)
    try:
        deadline = time.monotonic() + 60
        while not list(target.glob(".labrig-export-*.partial/media/*/manifest.json")):
            assert time.monotonic() < deadline and child.poll() is None, (
                "the export did not reach the media"
            )
            time.sleep(0.01)
    finally:
        child.kill()
        child.communicate(timeout=30)
    [left] = list(target.iterdir())
    assert left.name.startswith(".labrig-export-") and left.name.endswith(".partial")
    assert (left / "results").is_dir() and not (left / "SHA256SUMS").exists()


def test_a_media_file_replaced_by_a_fifo_is_refused_at_once_and_nothing_is_exported(
    lab: Lab, tmp_path: Path
) -> None:
    [media] = [p for p in (lab.root / "media").rglob("*.avi")]
    media.unlink()
    os.mkfifo(media)  # opened the ordinary way, a read would wait for a writer for ever
    target = tmp_path / "out"
    child = _export_child(lab, target)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 2 and b"LABRIG_NOT_A_REGULAR_FILE" in stderr
    assert b"Traceback" not in stderr
    # no folder named like a finished bundle
    assert not [p for p in target.glob("*") if not p.name.startswith(".")]
