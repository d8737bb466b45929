"""Sync over damaged local objects and onto a full destination (issue 16): each object that cannot
be archived fails with a stable ``LABRIG_*`` code and a message naming it and saying what to do, in
the batch report, the CLI's text and ``--json``, ``sync_failures`` and ``labrig sync status``; the
rest of the batch is archived; nothing of the failed object is left at the destination; and nothing
committed changes (the catalog's rows, the files, what ``labrig verify`` says).

The local damage is done to the template store's real files: a media segment deleted, replaced by
other bytes (of the same size, shorter, longer), one byte flipped, and a committed capture manifest
edited. "No room" is a real small filesystem (a tmpfs mounted for the test, which needs root): the
copy fails with ENOSPC midway, and the next sync after room is made completes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from labrig.bootstrap import bootstrap
from labrig.capture.integrity import verify_store
from labrig.store import open_store
from labrig.store.models import Base, SyncFailure, SyncObject
from labrig.sync import sync_status
from labrig.sync.service import BatchReport, object_path
from tests.integration.archive.conftest import Lab, as_user
from tests.support.cli import assert_typed, labrig
from tests.support.results import copy_store, make_results

OBJECTS = 6  # media (one video, shared by two captures), 2 timestamps, 2 manifests, 1 result
# what sync may write; every other table holds what was committed and must not change
SYNC_TABLES = {
    "sync_objects",
    "sync_acks",
    "sync_failures",
    "sync_batches",
    "outbox_events",
    "outbox_cursors",
    "consumer_inbox",
    "delivery_failures",
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with real results (two captures sharing one video, a published result)."""
    root = tmp_path_factory.mktemp("sync-faults-template") / "store"
    make_results(root)
    return root


@pytest.fixture
def lab(template: Path, tmp_path: Path) -> Iterator[Lab]:
    root = copy_store(template, tmp_path / "store")
    store = open_store(root)
    yield Lab(root, store, bootstrap(store=store, access=as_user(store, "ada")), "", "")
    store.close()


# what 'labrig verify' itself records (when it last found each blob whole): _committed asks it
VERIFY_COLUMNS = {("blobs", "verified_at")}


def _catalog(lab: Lab) -> dict[str, list[str]]:
    with lab.store.read() as session:
        return {
            name: sorted(
                repr(tuple(row))
                for row in session.execute(
                    select(*(c for c in table.columns if (name, c.name) not in VERIFY_COLUMNS))
                )
            )
            for name, table in Base.metadata.tables.items()
            if name not in SYNC_TABLES
        }


def _files(lab: Lab) -> dict[str, str]:
    return {
        p.relative_to(lab.root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in lab.root.rglob("*")
        if p.is_file() and not p.name.startswith("labrig.db")
    }


def _committed(lab: Lab) -> tuple[object, ...]:
    """What sync must leave as it found it: catalog rows, files, and verify's findings."""
    return _catalog(lab), _files(lab), verify_store(lab.store).problems


def _blob(lab: Lab, content: str) -> tuple[SyncObject, Path]:
    with lab.store.read() as session:
        obj = session.scalars(select(SyncObject).where(SyncObject.content == content)).first()
    assert obj is not None
    [path] = list((lab.root / "media").rglob(f"{obj.sha256}{obj.ext}"))
    return obj, path


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def _edit_manifest(path: Path) -> None:
    manifest = json.loads(path.read_bytes())
    manifest["device"] = {**manifest["device"], "device_id": "edited:afterwards"}
    path.write_text(json.dumps(manifest))


Damage = Callable[[Path], None]
DAMAGES: dict[str, tuple[str, Damage, str, str]] = {
    # case → (content damaged, how, code, what the message tells to do)
    "segment-deleted": ("media", Path.unlink, "LABRIG_SYNC_SOURCE_MISSING", "restore"),
    "segment-replaced-same-size": (
        "media",
        lambda p: p.write_bytes(os.urandom(p.stat().st_size)),
        "LABRIG_BLOB_MISMATCH",
        "labrig verify",
    ),
    "segment-replaced-shorter": (
        "media",
        lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 3]),
        "LABRIG_BLOB_MISMATCH",
        "labrig verify",
    ),
    "segment-replaced-longer": (
        "media",
        lambda p: p.write_bytes(p.read_bytes() + b"\0" * 4096),
        "LABRIG_BLOB_MISMATCH",
        "labrig verify",
    ),
    "segment-byte-flipped": ("media", _flip_a_byte, "LABRIG_BLOB_MISMATCH", "labrig verify"),
    "manifest-edited": ("capture-manifest", _edit_manifest, "LABRIG_BLOB_MISMATCH", "restore"),
}


def _configure(lab: Lab, dest: Path) -> None:
    lab.services.sync.configure(dest, "lab archive on the share", name="archive")


def _archived(dest: Path) -> set[str]:
    """Digests of the objects at the destination; no temp file may be there."""
    files = [p for p in (dest / "objects").rglob("*") if p.is_file()]
    assert not [p for p in files if p.name.endswith(".part")], files
    return {p.name[:64] for p in files}


def _assert_failed_alone(
    report: BatchReport | dict[str, Any], obj: SyncObject, code: str, advice: str
) -> str:
    """``obj`` is the one object the batch failed, with ``code`` and words naming it and saying
    what to do; every other object was archived. The failure's text."""
    data = report.to_json() if isinstance(report, BatchReport) else report
    assert list(data["failed"]) == [obj.sha256] and data["failed_codes"] == {obj.sha256: code}
    error = data["failed"][obj.sha256]
    assert obj.sha256[:12] in error and advice in error
    assert obj.content.split("-")[-1] in error  # media / manifest
    assert len(data["acknowledged"]) == OBJECTS - 1 and data["error"] is None
    return str(error)


def _assert_recorded(lab: Lab, obj: SyncObject, code: str) -> None:
    """What the Settings page and the status bar read says the code too."""
    with lab.store.read() as session:
        [failure] = list(session.scalars(select(SyncFailure)))
    assert (failure.sha256, failure.last_error.split(":")[0]) == (obj.sha256, code)
    status = sync_status(lab.store)
    assert (status.pending, status.failing) == (1, 1)
    assert status.last_error is not None and status.last_error["code"] == code
    assert status.last_error["object"] == obj.sha256 and code in status.last_error["error"]


@pytest.mark.parametrize("case", list(DAMAGES))
def test_a_damaged_local_object_fails_alone_with_its_code_and_nothing_changes(
    lab: Lab, tmp_path: Path, case: str
) -> None:
    content, damage, code, advice = DAMAGES[case]
    dest = tmp_path / "share" / "labrig"
    dest.mkdir(parents=True)
    obj, path = _blob(lab, content)
    damage(path)
    _configure(lab, dest)
    before = _committed(lab)

    report = lab.services.sync.run_once()

    _assert_failed_alone(report, obj, code, advice)
    assert obj.sha256 not in _archived(dest) and len(_archived(dest)) == OBJECTS - 1
    _assert_recorded(lab, obj, code)
    assert _committed(lab) == before
    again = lab.services.sync.run_once(retry_now=True)  # still refused, still nothing there
    assert list(again.failed) == [obj.sha256] and again.failed_codes == {obj.sha256: code}
    assert obj.sha256 not in _archived(dest) and _committed(lab) == before


def test_the_cli_names_the_damaged_object_with_its_code_in_text_and_json(
    lab: Lab, tmp_path: Path
) -> None:
    dest = tmp_path / "share" / "labrig"
    dest.mkdir(parents=True)
    obj, path = _blob(lab, "media")
    _flip_a_byte(path)
    _configure(lab, dest)
    before = _committed(lab)

    text = labrig(lab.root, "sync", "--once")
    assert_typed(text)
    assert text.returncode == 1
    [line] = [line for line in text.stdout.splitlines() if obj.sha256[:12] in line]
    assert "LABRIG_BLOB_MISMATCH: " in line and "labrig verify" in line
    assert "5 acknowledged, 1 pending." in text.stdout

    as_json = labrig(lab.root, "sync", "--once", "--json")
    assert_typed(as_json)
    assert as_json.returncode == 1
    [batch] = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert batch["failed_codes"] == {obj.sha256: "LABRIG_BLOB_MISMATCH"}
    assert not batch["acknowledged"]

    status = labrig(lab.root, "sync", "status", "--json")
    assert status.returncode == 0
    assert json.loads(status.stdout)["last_error"]["code"] == "LABRIG_BLOB_MISMATCH"
    shown = labrig(lab.root, "sync", "status")
    assert "Last error" in shown.stdout and "LABRIG_BLOB_MISMATCH: " in shown.stdout
    assert obj.sha256 not in _archived(dest) and _committed(lab) == before


def test_a_destination_that_cannot_store_one_object_fails_it_alone_with_its_code(
    lab: Lab, tmp_path: Path
) -> None:
    dest = tmp_path / "share" / "labrig"
    dest.mkdir(parents=True)
    obj, _ = _blob(lab, "media")
    _configure(lab, dest)
    # a file stands where the media's folder at the archive belongs (another program's litter)
    (dest / "objects" / obj.sha256[:2]).write_text("not a folder")
    before = _committed(lab)

    report = lab.services.sync.run_once()

    error = _assert_failed_alone(report, obj, "LABRIG_SYNC_COPY_FAILED", "writable")
    assert str(dest) in error and "File exists" in error
    _assert_recorded(lab, obj, "LABRIG_SYNC_COPY_FAILED")
    assert _committed(lab) == before


# -- a destination without room --

SMALL = "2m"  # the share's size; filled up to the room left below
ROOM = 48 * 1024  # fits the five small objects and the batch record, not the 96 KB video


@pytest.fixture
def small_share(tmp_path: Path) -> Iterator[Path]:
    """A real 2 MiB filesystem (tmpfs), unmounted after the test; needs root."""
    if os.geteuid() != 0:
        pytest.fail("this test mounts a small tmpfs to fill: run it as root (CI runs as root)")
    share = tmp_path / "small-share"
    share.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SMALL}", "tmpfs", str(share)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.fail(f"cannot mount a tmpfs for the no-room test: {mounted.stderr.strip()}")
    try:
        yield share
    finally:
        subprocess.run(["umount", str(share)], check=False)
        if os.path.ismount(share):
            subprocess.run(["umount", "-l", str(share)], check=True)


def _fill(share: Path, leave: int) -> Path:
    """Another program's file, taking all the room on ``share`` but ``leave`` bytes."""
    filler = share / "someone-elses.bin"
    stat = os.statvfs(share)
    free = stat.f_bavail * stat.f_frsize
    filler.write_bytes(b"\0" * (free - leave))
    return filler


def test_a_full_destination_fails_the_copy_with_its_code_and_the_next_sync_completes(
    lab: Lab, small_share: Path
) -> None:
    dest = small_share / "labrig"
    dest.mkdir()
    obj, _ = _blob(lab, "media")
    _configure(lab, dest)
    filler = _fill(small_share, ROOM)
    before = _committed(lab)

    full = labrig(lab.root, "sync", "--once", "--json")
    assert_typed(full)
    assert full.returncode == 1
    [batch] = [json.loads(line) for line in full.stdout.splitlines()]
    error = _assert_failed_alone(batch, obj, "LABRIG_SYNC_DESTINATION_FULL", "Free space")
    assert str(dest) in error
    # the partial copy was removed: only the five small objects are there
    assert obj.sha256 not in _archived(dest) and len(_archived(dest)) == OBJECTS - 1
    _assert_recorded(lab, obj, "LABRIG_SYNC_DESTINATION_FULL")
    assert _committed(lab) == before

    filler.unlink()  # room is made
    resumed = labrig(lab.root, "sync", "--once")
    assert_typed(resumed)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "6 acknowledged, 0 pending." in resumed.stdout
    with lab.store.read() as session:
        assert not list(session.scalars(select(SyncFailure)))
        digests = {o.sha256: object_path(o) for o in session.scalars(select(SyncObject))}
    assert _archived(dest) == set(digests)
    assert all(
        hashlib.sha256((dest / path).read_bytes()).hexdigest() == sha
        for sha, path in digests.items()
    )
    assert sync_status(lab.store).last_error is None
    assert _committed(lab) == before
