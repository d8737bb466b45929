"""Sync to a real folder: every committed object acknowledged once, by digest, with the audit
chain head per batch; a destination that fails mid-copy, hands back a corrupted copy or disappears
gets no acknowledgement without a digest match, and sync resumes cleanly once it is whole again.
Nothing local changes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from labrig.domain.roles import RoleRequiredError
from labrig.events import events_after
from labrig.store.models import OutboxEvent, SyncAck, SyncFailure, SyncObject
from labrig.sync import FolderDestination, sync_status
from labrig.sync.destination import (
    MARKER_NAME,
    DestinationConfig,
    DestinationUnavailableError,
    Readable,
)
from labrig.sync.service import (
    BatchReport,
    DestinationFactory,
    SyncNotConfiguredError,
    SyncService,
    object_path,
)
from labrig.tasks import UNTRACKED, Task
from tests.integration.archive.conftest import Lab

ACK = "sync.object.acknowledged"
# two captures share one video
CONTENTS = {"media": 1, "timestamps": 2, "capture-manifest": 2, "result": 1}


def acks(lab: Lab) -> list[dict[str, object]]:
    return [e.payload for e in events_after(lab.store, 0) if e.name == ACK]


def local_state(lab: Lab) -> dict[str, str]:
    """Every file of the data folder but the database, with its digest: sync must
    change none of them."""
    return {
        p.relative_to(lab.root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in lab.root.rglob("*")
        if p.is_file() and not p.name.startswith("labrig.db")
    }


def destination_files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (root / "objects").rglob("*")
        if p.is_file()
    }


def assert_whole(lab: Lab, dest: Path) -> None:
    """Every indexed object acknowledged once, its copy named by and hashing to its digest,
    no temp file left."""
    with lab.store.read() as session:
        objects = {o.sha256: o for o in session.scalars(select(SyncObject))}
        acked = set(session.scalars(select(SyncAck.sha256)))
        failures = session.scalar(select(func.count()).select_from(SyncFailure))
    assert acked == set(objects) and failures == 0
    files = destination_files(dest)
    assert set(files) == {object_path(o) for o in objects.values()}
    assert all(Path(path).name.startswith(digest) for path, digest in files.items())
    payloads = acks(lab)
    # one event per acknowledgement
    assert sorted(p["object_sha256"] for p in payloads) == sorted(objects)
    assert {(p["object_sha256"], p["object_kind"]) for p in payloads} == {
        (s, o.kind) for s, o in objects.items()
    }
    status = sync_status(lab.store)
    assert (status.pending, status.failing, status.last_error) == (0, 0, None)


def configure(lab: Lab, dest: Path) -> None:
    lab.services.sync.configure(dest, "lab archive on the share", name="archive")


def test_everything_committed_is_copied_and_acknowledged_once(lab: Lab, dest: Path) -> None:
    before = local_state(lab)
    configure(lab, dest)
    report = lab.services.sync.run_once()
    assert (
        len(report.acknowledged) == sum(CONTENTS.values())
        and not report.failed
        and report.error is None
    )
    assert_whole(lab, dest)
    assert {p["destination"] for p in acks(lab)} == {"archive"}
    batch = json.loads((dest / report.batch_file).read_text()) if report.batch_file else {}
    assert batch["schema"] == "labrig.sync.batch/1"
    # the configure entry
    assert batch["audit_chain_head"] == lab.services.governance.audit.head().to_json()
    assert {o["sha256"] for o in batch["objects"]} == set(report.acknowledged)
    status = sync_status(lab.store)
    assert (status.acknowledged, status.pending, status.failing, status.last_error) == (
        6,
        0,
        0,
        None,
    )
    assert {k: v["acknowledged"] for k, v in status.by_content.items()} == CONTENTS

    # idempotent: nothing pending, no new event, no batch record
    again = lab.services.sync.run_once()
    assert again.pending == 0 and again.batch_file is None and len(acks(lab)) == 6
    assert local_state(lab) == before


def test_a_revision_is_synced_as_a_new_result_manifest(lab: Lab, dest: Path) -> None:
    configure(lab, dest)
    lab.services.sync.run_once()
    revision = lab.services.governance.revisions.revise(
        lab.published_id, {"track:0.extent": 2.0}, "ruler"
    )
    # the outbox drives the index, as the GUI's dispatcher thread does
    lab.services.dispatcher.dispatch_once()
    with lab.store.read() as session:
        results = list(
            session.scalars(
                select(SyncObject)
                .where(SyncObject.content == "result")
                .order_by(SyncObject.indexed_at)
            )
        )
    assert len(results) == 2 and sync_status(lab.store).pending == 1
    report = lab.services.sync.run_once()
    assert report.acknowledged == [results[1].sha256]
    manifest = json.loads((dest / object_path(results[1])).read_bytes())
    assert manifest["schema"] == "labrig.sync.result/1"
    assert [r["digest"] for r in manifest["revisions"]] == [revision.digest]
    automatic = manifest["automatic_document"].encode()
    assert hashlib.sha256(automatic).hexdigest() == manifest["automatic_digest"]
    batch = json.loads((dest / str(report.batch_file)).read_text())
    # the revision's audit entry travels with the batch
    assert batch["audit_chain_head"]["seq"] == 2
    assert_whole(lab, dest)


Hook = Callable[[SyncObject, int, int], None]


class _ChunkHook:
    """The task a destination copies under, calling ``hook(done)`` each time it reports
    a chunk on disk."""

    def __init__(self, task: Task, size: int, hook: Callable[[int], None]) -> None:
        self.task, self.size, self.hook = task, size, hook

    def progress(self, fraction: float, message: str = "") -> None:
        self.hook(round(fraction * self.size))
        self.task.progress(fraction, message)

    @property
    def cancelled(self) -> bool:
        return self.task.cancelled

    def check_cancelled(self) -> None:
        self.task.check_cancelled()


def hooked(lab: Lab, hook: Hook) -> DestinationFactory:
    """Folder destinations (8 KiB chunks) that call ``hook(object, bytes on disk, size)`` after each
    chunk of a copy: where these tests break the copy midway."""

    class Hooked(FolderDestination):
        def put(self, relpath: str, source: Readable, size: int, task: Task = UNTRACKED) -> None:
            with lab.store.read() as session:  # objects are indexed at the start of each batch
                obj = session.get(SyncObject, Path(relpath).name[:64])
            chunks = (
                task if obj is None else _ChunkHook(task, size, lambda done: hook(obj, done, size))
            )
            super().put(relpath, source, size, chunks)

    return lambda config: Hooked(config, chunk=8192)


def _replace_objects_with_a_file(dest: Path) -> None:
    shutil.move(dest / "objects", dest.parent / "objects-elsewhere")
    (dest / "objects").write_text("not a folder")


def test_a_copy_that_fails_midway_is_not_acknowledged_and_resumes(lab: Lab, dest: Path) -> None:
    before = local_state(lab)
    hit: list[str] = []

    def break_destination(obj: SyncObject, done: int, total: int) -> None:
        if obj.content == "media" and done < total and not hit:
            hit.append(obj.sha256)
            _replace_objects_with_a_file(dest)  # the copy's rename into objects/… now fails

    sync = lab.services_as("ada", hooked(lab, break_destination)).sync
    configure(lab, dest)
    report = sync.run_once()
    assert hit and hit[0] in report.failed and hit[0] not in report.acknowledged
    assert not acks(lab) or hit[0] not in {p["object_sha256"] for p in acks(lab)}
    status = sync_status(lab.store)
    assert status.pending >= 1 and status.failing >= 1 and status.last_error is not None
    # left where the rename could not reach
    assert list((dest.parent / "objects-elsewhere").rglob("*.part"))

    (dest / "objects").unlink()
    shutil.move(dest.parent / "objects-elsewhere", dest / "objects")
    resumed = sync.run_once(retry_now=True)
    assert hit[0] in resumed.acknowledged and not resumed.failed
    assert_whole(lab, dest)  # … and removed once the object is whole
    assert local_state(lab) == before


def test_a_copy_truncated_by_another_writer_is_not_acknowledged(lab: Lab, dest: Path) -> None:
    truncated: list[str] = []

    def truncate_the_copy(obj: SyncObject, done: int, total: int) -> None:
        if obj.content == "media" and done < total and not truncated:
            [part] = list((dest / "objects").rglob("*.part"))
            # another program empties the file; the copy goes on writing at its offset
            os.truncate(part, 0)
            truncated.append(obj.sha256)

    sync = lab.services_as("ada", hooked(lab, truncate_the_copy)).sync
    configure(lab, dest)
    report = sync.run_once()
    assert report.failed[truncated[0]].startswith("the destination's copy of media")
    assert truncated[0] not in {p["object_sha256"] for p in acks(lab)}
    assert len(report.acknowledged) == 5
    assert sync.run_once(retry_now=True).acknowledged == truncated
    assert_whole(lab, dest)


class CorruptingFolder(FolderDestination):
    """A destination that hands back a corrupted copy: it flips a byte of each object it stores,
    on disk, after the durable rename (bit rot, a faulty share, a bad cache), until ``healthy``
    is set."""

    healthy = False

    def put(self, relpath: str, source: Readable, size: int, task: Task = UNTRACKED) -> None:
        super().put(relpath, source, size, task)
        if not CorruptingFolder.healthy and relpath.startswith("objects/"):
            with open(self.root / relpath, "r+b") as fh:
                first = fh.read(1)
                fh.seek(0)
                fh.write(bytes([first[0] ^ 0x01]))


def test_a_corrupted_copy_is_never_acknowledged_and_is_replaced(lab: Lab, dest: Path) -> None:
    CorruptingFolder.healthy = False
    sync = lab.services_as("ada", CorruptingFolder).sync
    configure(lab, dest)
    report = sync.run_once()
    assert not report.acknowledged and len(report.failed) == 6 and not acks(lab)
    assert all("hashes to" in error for error in report.failed.values())
    assert report.batch_file is None and not list((dest / "batches").iterdir())
    with lab.store.read() as session:
        assert {f.attempts for f in session.scalars(select(SyncFailure))} == {1}

    # the share is repaired: the corrupted copies are replaced, then confirmed
    CorruptingFolder.healthy = True
    assert len(sync.run_once(retry_now=True).acknowledged) == 6
    assert_whole(lab, dest)


@pytest.mark.parametrize("when", ["before", "midway"])
def test_a_destination_that_disappears_gets_nothing_and_sync_resumes(
    lab: Lab, dest: Path, when: str
) -> None:
    before = local_state(lab)
    away = dest.parent / "unmounted"

    def unmount(obj: SyncObject, done: int, total: int) -> None:
        if obj.content == "media" and done < total and dest.exists():
            shutil.move(dest, away)

    sync = lab.services_as("ada", hooked(lab, unmount)).sync
    configure(lab, dest)
    if when == "before":
        shutil.move(dest, away)
    report = sync.run_once()
    assert report.error is not None and "is not available" in report.error
    assert not dest.exists()  # never re-created on the local disk under the mount point
    acknowledged = {p["object_sha256"] for p in acks(lab)}
    assert acknowledged == set(report.acknowledged) and not acknowledged & set(report.failed)
    assert len(acknowledged) < 6 and (when == "midway" or not acknowledged)
    assert sync_status(lab.store).last_error is not None

    shutil.move(away, dest)  # the share is back
    sync = lab.services_as("ada", lambda c: FolderDestination(c, chunk=8192)).sync  # and stays
    resumed = sync.run_once()  # failed objects wait for their backoff …
    resumed_now = sync.run_once(retry_now=True)  # … unless someone asks now
    assert resumed.error is None and resumed_now.error is None
    assert_whole(lab, dest)
    assert local_state(lab) == before


def test_failed_objects_wait_for_their_backoff(lab: Lab, dest: Path) -> None:
    now = [datetime(2030, 1, 1, tzinfo=UTC)]
    CorruptingFolder.healthy = False
    sync = SyncService(
        lab.store,
        lab.services.dispatcher,
        lab.services.governance.access,
        CorruptingFolder,
        clock=lambda: now[0],
    )
    configure(lab, dest)
    assert len(sync.run_once().failed) == 6
    assert sync.run_once().pending == 0  # within the 1 s backoff: not retried
    now[0] += timedelta(seconds=1.5)
    assert len(sync.run_once().failed) == 6
    with lab.store.read() as session:
        failures = list(session.scalars(select(SyncFailure)))
    assert {f.attempts for f in failures} == {2}
    assert all(f.next_attempt_at == now[0] + timedelta(seconds=2) for f in failures)
    now[0] += timedelta(seconds=1)
    assert sync.run_once().pending == 0  # the second backoff is 2 s
    CorruptingFolder.healthy = True
    now[0] += timedelta(seconds=1.5)
    assert len(sync.run_once().acknowledged) == 6
    assert_whole(lab, dest)


def test_an_object_already_at_the_destination_is_acknowledged_without_copying(
    lab: Lab, dest: Path
) -> None:
    configure(lab, dest)
    lab.services.sync.run_once()
    other = dest.parent / "second-workstation-view"
    shutil.copytree(dest, other)
    # forget the acknowledgements, as a second workstation never had them
    with lab.store.write() as session:
        session.query(SyncAck).delete()
    stamp = {p: p.stat().st_mtime_ns for p in (dest / "objects").rglob("*") if p.is_file()}
    report = lab.services.sync.run_once()
    assert len(report.acknowledged) == 6 and len(acks(lab)) == 12
    assert {p: p.stat().st_mtime_ns for p in (dest / "objects").rglob("*") if p.is_file()} == stamp


def test_configuring_sync_is_an_audited_admin_setting(lab: Lab, dest: Path, tmp_path: Path) -> None:
    with pytest.raises(SyncNotConfiguredError):
        lab.services.sync.run_once()
    access = lab.services.governance.access
    access.set_role("ada", "admin", "lab manager")
    access.set_role("rita", "reviewer", "reviews")
    with pytest.raises(RoleRequiredError) as refused:
        lab.services_as("rita").sync.configure(dest, "my own share")
    assert (
        "changing settings needs the admin role" in refused.value.message
        and not (dest / MARKER_NAME).exists()
    )
    with pytest.raises(DestinationUnavailableError):
        lab.services.sync.configure(tmp_path / "not-mounted", "archive")
    assert not (tmp_path / "not-mounted").exists()

    first = lab.services.sync.configure(dest, "lab archive", name="archive")
    again = lab.services.sync.configure(dest, "renamed", name="archive-2")
    # the same archive: its acknowledgements still count
    assert again.destination_id == first.destination_id
    entries = [e for e in lab.services.governance.audit.entries() if e.action == "sync.configure"]
    assert [(e.actor, e.object_id, e.reason) for e in entries] == [
        ("ada", first.destination_id, "lab archive"),
        ("ada", first.destination_id, "renamed"),
    ]
    assert entries[1].change["previous"]["name"] == "archive"
    assert lab.services.governance.audit.verify().intact

    access.set_role("tom", "technician", "new hire")
    assert len(lab.services_as("tom").sync.run_once().acknowledged) == 6  # running sync: any role
    access.set_role("tom", "none", "left")
    with pytest.raises(RoleRequiredError):
        lab.services_as("tom").sync.run_once()


def test_another_archive_in_the_folder_is_refused(lab: Lab, dest: Path) -> None:
    configure(lab, dest)
    marker = json.loads((dest / MARKER_NAME).read_text())
    (dest / MARKER_NAME).write_text(json.dumps(marker | {"destination_id": "another-archive"}))
    report = lab.services.sync.run_once()
    assert report.error is not None and "holds another archive" in report.error and not acks(lab)


def test_the_outbox_drives_the_index(lab: Lab) -> None:
    """Objects are indexed by the durable consumer from the outbox events, once each,
    whoever delivers them."""
    # the template's
    assert sync_status(lab.store).objects == 6 and sync_status(lab.store).not_indexed == 0
    lab.services.governance.revisions.revise(lab.published_id, {"track:1.extent": 3.0}, "ruler")
    status = sync_status(lab.store)
    assert (status.objects, status.not_indexed) == (6, 1)
    lab.services.dispatcher.dispatch_once()
    lab.services.dispatcher.dispatch_once()  # redelivery changes nothing
    status = sync_status(lab.store)
    assert (status.objects, status.not_indexed, status.pending) == (7, 0, 7)
    assert lab.services.sync.index() == 0
    with lab.store.read() as session:
        watched = session.scalar(
            select(func.count())
            .select_from(OutboxEvent)
            .where(
                OutboxEvent.name.in_(["capture.committed", "result.published", "review.revised"])
            )
        )
    assert watched == 4  # two captures, one published result, one revision


def test_a_destination_config_round_trips() -> None:
    config = DestinationConfig(
        "id", "archive", "folder", "/srv/share", "ada", "2030-01-01T00:00:00+00:00"
    )
    assert DestinationConfig(**config.to_json()) == config


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_media_file_replaced_by_a_fifo_fails_its_object_at_once(lab: Lab, dest: Path) -> None:
    [media] = list((lab.root / "media").rglob("*.avi"))
    media.unlink()
    os.mkfifo(media)  # opened the ordinary way, a read would wait for a writer for ever
    configure(lab, dest)
    reports: list[BatchReport] = []
    # on a thread of its own: a sync that waits on the FIFO fails this test instead of hanging it
    worker = threading.Thread(
        target=lambda: reports.append(lab.services.sync.run_once()), daemon=True
    )
    worker.start()
    worker.join(60)
    assert reports, "the sync waited on the FIFO"
    [report] = reports
    [error] = report.failed.values()
    assert "is a FIFO, not a file" in error and "restore the file" in error
    assert len(report.acknowledged) == sum(CONTENTS.values()) - 1  # the rest is archived
