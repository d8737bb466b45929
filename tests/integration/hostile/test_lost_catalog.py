"""The catalog can be rebuilt from the media store (issue 16): committed captures whose rows were
lost are listed by ``labrig verify`` and re-catalogued by ``labrig recover --adopt``, every file
re-hashed, with an entry in the audit trail.

Three ways of losing rows, made as they happen: the WAL file deleted after a commit that had not
been checkpointed yet (the committing process died), the database truncated to 0 bytes, and the
database deleted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import REPO, assert_typed, labrig, write_video

IMPORT_AND_DIE = (
    "import os, sys; from pathlib import Path; from labrig.store import open_store; "
    "from labrig.capture import import_media; "
    "import_media(open_store(sys.argv[1]), Path(sys.argv[2])); os._exit(0)"
)


def _listed(store: Path) -> dict[str, dict[str, object]]:
    listed = labrig(store, "captures", "--json")
    assert listed.returncode == 0, listed.stderr
    return {(row := json.loads(line))["id"]: row for line in listed.stdout.splitlines()}


@pytest.fixture(scope="module")
def two_captures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding two imported videos, made once with the real command; each test copies
    it (the videos sit beside it, as ``trial-0.avi`` and ``trial-1.avi``)."""
    folder = tmp_path_factory.mktemp("two-captures")
    for n in range(2):
        write_video(folder / f"trial-{n}.avi", frames=8 + n, seed=n)
    imported = labrig(folder / "store", "import", *(str(folder / f"trial-{n}.avi") for n in (0, 1)))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    return folder


def _store_with_two_captures(
    tmp_path: Path, template: Path
) -> tuple[Path, dict[str, dict[str, object]]]:
    shutil.copytree(template, tmp_path, dirs_exist_ok=True)
    store = tmp_path / "store"
    return store, _listed(store)


def _lose_the_wal_of_the_last_commit(tmp_path: Path, template: Path) -> tuple[Path, str]:
    """A store whose last import is committed in the WAL only (the importing process died before
    a checkpoint), then the WAL and its index deleted; the store and the lost capture's id."""
    store, before = _store_with_two_captures(tmp_path, template)
    write_video(tmp_path / "late.avi", frames=11, seed=9)
    child = subprocess.run(
        [sys.executable, "-c", IMPORT_AND_DIE, str(store), str(tmp_path / "late.avi")],
        cwd=REPO,
        capture_output=True,
        timeout=60,
    )
    assert child.returncode == 0, child.stderr
    assert (store / "labrig.db-wal").stat().st_size > 0  # the commit is there, not yet in the db
    for companion in ("labrig.db-wal", "labrig.db-shm"):
        (store / companion).unlink()
    after = _listed(store)
    assert after.keys() == before.keys()  # the late capture vanished from the catalog
    [manifest] = [
        p
        for p in (store / "media").rglob("*.json")
        if p.stem not in {str(r["manifest_sha256"]) for r in before.values()}
    ]
    return store, json.loads(manifest.read_bytes())["capture_id"]


def test_a_capture_lost_with_the_wal_is_listed_by_verify_and_adopted_back(
    tmp_path: Path, two_captures: Path
) -> None:
    store, lost = _lose_the_wal_of_the_last_commit(tmp_path, two_captures)

    verified = labrig(store, "verify", "--json")
    assert_typed(verified)
    assert verified.returncode == 1
    [problem] = json.loads(verified.stdout)["problems"]
    assert problem["subject"] == lost
    assert "not in the catalog" in problem["problem"] and "recover --adopt" in problem["problem"]

    adopted = labrig(store, "recover", "--adopt", "--json")
    assert_typed(adopted)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    [item] = json.loads(adopted.stdout)
    assert (item["capture_id"], item["outcome"], item["frames"]) == (lost, "adopted", 11)

    assert _listed(store)[lost]["state"] == "committed"
    assert labrig(store, "verify", "--json").returncode == 0
    trail = json.loads(labrig(store, "audit", "--json").stdout)
    assert [(e["action"], e["object_id"]) for e in trail] == [("capture.adopt", lost)]
    # the re-catalogued capture is whole: its media decode for analysis as before
    again = labrig(store, "recover", "--adopt", "--json")
    assert json.loads(again.stdout) == []  # nothing left to adopt


@pytest.mark.parametrize("loss", ["truncated to 0 bytes", "deleted"])
def test_a_catalog_lost_beside_committed_captures_is_refused_then_rebuilt(
    tmp_path: Path, two_captures: Path, loss: str
) -> None:
    store, before = _store_with_two_captures(tmp_path, two_captures)
    db = store / "labrig.db"
    if loss == "deleted":
        db.unlink()
    else:
        db.write_bytes(b"")
    for companion in ("labrig.db-wal", "labrig.db-shm"):
        (store / companion).unlink(missing_ok=True)

    refused = labrig(store, "captures", "--json")
    assert_typed(refused)
    assert refused.returncode == 2 and "LABRIG_CATALOG_MISSING" in refused.stderr
    assert "recover --adopt" in refused.stderr

    adopted = labrig(store, "recover", "--adopt")
    assert_typed(adopted)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    after = _listed(store)
    assert after.keys() == before.keys()
    for capture_id, row in before.items():  # the same captures, frames and manifests
        for field in ("frames", "manifest_sha256", "device_id", "origin", "state"):
            assert after[capture_id][field] == row[field], field
    assert labrig(store, "verify", "--json").returncode == 0
    # a file imported before is still known as imported: the guard was rebuilt too
    again = labrig(store, "import", str(tmp_path / "trial-0.avi"))
    assert again.returncode == 1 and "LABRIG_ALREADY_IMPORTED" in again.stdout


def test_an_orphan_whose_files_do_not_verify_is_left_as_it_is_and_reported(
    tmp_path: Path, two_captures: Path
) -> None:
    store, lost = _lose_the_wal_of_the_last_commit(tmp_path, two_captures)
    listed = {str(r["manifest_sha256"]) for r in _listed(store).values()}
    [manifest] = [p for p in (store / "media").rglob("*.json") if p.stem not in listed]
    segment = json.loads(manifest.read_bytes())["segments"][0]
    [media] = list((store / "media").rglob(f"{segment['sha256']}.avi"))
    media.chmod(0o644)
    with open(media, "r+b") as fh:  # one byte flipped on disk
        fh.seek(os.path.getsize(media) // 2)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0xFF]))
    files_before = sorted((p.name, p.stat().st_size) for p in (store / "media").rglob("*.*"))

    adopted = labrig(store, "recover", "--adopt", "--json")

    assert_typed(adopted)
    assert adopted.returncode == 1
    [item] = json.loads(adopted.stdout)
    assert item["outcome"] == "left" and "no longer matches its digest" in item["detail"]
    assert lost not in _listed(store)
    assert (
        sorted((p.name, p.stat().st_size) for p in (store / "media").rglob("*.*")) == files_before
    )
