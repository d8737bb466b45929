"""Importing what a lab's disks really hold (issue 16): file names that are not UTF-8, a source
deleted while it is copied, a FIFO named like a video, and the same file imported several times at
the same moment. Each ends in a committed capture or a typed refusal; nothing half-made is left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from labrig.capture.importer import AlreadyImportedError, ImportRefusedError, import_media
from labrig.capture.recorder import provisional_root
from labrig.store import Store, open_store
from labrig.store.models import Capture
from labrig.tasks import TaskControl
from tests.support.cli import REPO, assert_typed, labrig, write_video

NOT_UTF8 = b"trial-\xff\xfe.avi"  # Latin-1 bytes from an old camera's software


def _committed(store: Store) -> list[Capture]:
    with store.read() as session:
        return list(session.scalars(select(Capture).where(Capture.state == "committed")))


def test_a_file_whose_name_is_not_utf8_is_imported_by_the_command(tmp_path: Path) -> None:
    source = os.path.join(os.fsencode(tmp_path), NOT_UTF8)
    write_video(source, frames=9)
    store = tmp_path / "store"

    imported = labrig(store, "import", source)

    assert_typed(imported)
    assert imported.returncode == 0, imported.stderr
    [row] = [json.loads(line) for line in labrig(store, "captures", "--json").stdout.splitlines()]
    assert row["state"] == "committed" and row["frames"] == 9
    assert row["device_id"] == "imported:trial-\\xff\\xfe.avi"  # its name, printable
    assert labrig(store, "verify", "--json").returncode == 0


def test_a_watch_folder_holding_such_a_name_ingests_it_and_the_good_file_beside_it(
    tmp_path: Path,
) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    write_video(os.path.join(os.fsencode(drop), NOT_UTF8), frames=6, seed=1)
    write_video(drop / "good.avi", frames=7, seed=2)
    store = tmp_path / "store"
    watcher = subprocess.Popen(
        [sys.executable, "-m", "labrig", "--store", str(store), "watch", str(drop)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )
    assert watcher.stdout is not None
    reported: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while len([r for r in reported if "capture " in r]) < 2 and time.monotonic() < deadline:
            line = watcher.stdout.readline()
            if not line:
                break
            reported.append(line)
    finally:
        watcher.terminate()
        _, stderr = watcher.communicate(timeout=30)
    assert "Traceback" not in stderr and watcher.returncode == 0, stderr
    ingested = [r for r in reported if "capture " in r]
    assert len(ingested) == 2, reported
    assert any("good.avi" in r for r in ingested) and any(
        "trial-\\xff\\xfe.avi" in r for r in ingested
    )


def test_a_source_deleted_while_it_is_copied_is_still_committed_whole(
    store: Store, tmp_path: Path
) -> None:
    source = tmp_path / "long.avi"
    write_video(source, frames=200)

    def delete_once_copying(_fraction: float, message: str) -> None:
        if message.startswith("copying") and source.exists():
            source.unlink()  # the technician tidies the camera's card mid-import

    result = import_media(store, source, task=TaskControl(delete_once_copying))

    assert not source.exists() and result.frame_count == 200
    assert [c.id for c in _committed(store)] == [result.capture_id]
    assert list(provisional_root(store).iterdir()) == []


def test_a_source_that_is_gone_or_not_a_file_is_refused_and_leaves_nothing(
    store: Store, tmp_path: Path
) -> None:
    fifo = tmp_path / "camera.avi"
    os.mkfifo(fifo)  # opened the ordinary way, it would wait for a writer for ever
    folder = tmp_path / "folder.avi"
    folder.mkdir()
    for path, said in (
        (tmp_path / "gone.avi", "nothing is there"),
        (fifo, "is not a file"),
        (folder, "is not a file"),
    ):
        with pytest.raises(ImportRefusedError, match=said) as refused:
            import_media(store, path)
        assert refused.value.code == "LABRIG_NOT_MEDIA"
    assert _committed(store) == []
    assert not provisional_root(store).exists() or list(provisional_root(store).iterdir()) == []


def test_imports_of_one_file_that_pass_the_earlier_check_together_commit_it_once(
    store: Store, tmp_path: Path
) -> None:
    """Two workstations' imports (two stores on one catalog, so two connections), held together
    right after decoding, just before the check for an earlier import: both pass it, and the
    catalog's key on the imported digest decides at the commit."""
    source = tmp_path / "trial.avi"
    write_video(source, frames=64)
    both_decoded = threading.Barrier(2, timeout=30)
    outcomes: list[object] = []

    def hold_when_decoded(fraction: float, message: str) -> None:
        if message.startswith("decoded"):
            both_decoded.wait()

    def one_import(workstation: Store) -> None:
        try:
            outcomes.append(import_media(workstation, source, task=TaskControl(hold_when_decoded)))
        except AlreadyImportedError as exc:
            outcomes.append(exc)

    workstations = [open_store(store.root) for _ in range(2)]  # opened (migrated) one at a time
    threads = [threading.Thread(target=one_import, args=(w,)) for w in workstations]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for workstation in workstations:
        workstation.close()

    assert len(outcomes) == 2
    [won] = [o for o in outcomes if not isinstance(o, AlreadyImportedError)]
    [lost] = [o for o in outcomes if isinstance(o, AlreadyImportedError)]
    assert lost.code == "LABRIG_ALREADY_IMPORTED" and won.capture_id in lost.message  # type: ignore[attr-defined]
    assert [c.id for c in _committed(store)] == [won.capture_id]  # type: ignore[attr-defined]
    assert list(provisional_root(store).iterdir()) == []
    # the loser's manifest was withdrawn: the media store holds one manifest, the winner's
    assert len(list(store.media_dir.rglob("*.json"))) == 1


def test_three_imports_of_one_file_started_at_once_from_the_command_line_commit_it_once(
    tmp_path: Path,
) -> None:
    source = tmp_path / "trial.avi"
    write_video(source, frames=30)
    store = tmp_path / "store"
    assert labrig(store, "captures").returncode == 0  # the store exists before the race
    command = [sys.executable, "-m", "labrig", "--store", str(store), "import", str(source)]
    runs = [
        subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    ended = [(run.wait(60), *run.communicate(timeout=30)) for run in runs]
    assert all("Traceback" not in out + err for _, out, err in ended), ended
    assert sorted(code for code, _, _ in ended) == [0, 1, 1], ended  # 1: a file was refused
    assert all("refused" in out and "LABRIG_ALREADY_IMPORTED" in out for c, out, _ in ended if c)
    rows = labrig(store, "captures", "--json").stdout.splitlines()
    assert len(rows) == 1
    verified = labrig(store, "verify", "--json")
    assert verified.returncode == 0, verified.stdout


def test_a_store_where_a_file_was_imported_twice_before_the_guard_keeps_both_and_the_earliest_wins(
    tmp_path: Path,
) -> None:
    """Migration 0013 on a store of the previous revision holding the same file imported twice (the
    race it closes): both captures stay as they were; the guard records the earlier one."""
    from sqlalchemy import text

    from labrig.store import migrate, paths
    from labrig.store.dialects.sqlite import create_sqlite_engine
    from labrig.store.models import ImportedSource

    root = tmp_path / "old"
    root.mkdir()
    engine = create_sqlite_engine(root / paths.DB_FILENAME)
    migrate.upgrade(engine, "0012_recording_purpose")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO labrig_meta (key, value) VALUES ('app', 'labrig')"))
        for capture_id, at in (("b-second", "2026-11-02"), ("a-first", "2026-11-01")):
            conn.execute(
                text(
                    "INSERT INTO captures (id, device_id, origin, state, mode, verification, "
                    "started_at, committed_at, frame_count, dropped_frames, source_sha256) VALUES "
                    "(:id, 'imported:trial.avi', 'imported', 'committed', '{}', '{}', :at, :at, "
                    "1, 0, :digest)"
                ),
                {"id": capture_id, "at": at, "digest": "d" * 64},
            )
    engine.dispose()

    store = open_store(root)
    try:
        assert sorted(c.id for c in _committed(store)) == ["a-first", "b-second"]
        with store.read() as session:
            [guard] = session.scalars(select(ImportedSource))
        assert (guard.source_sha256, guard.capture_id) == ("d" * 64, "a-first")
    finally:
        store.close()
