"""One window per data folder: the lock on ``<store>/labrig.lock``, on real files
and real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labrig.errors import LabrigError, StoreError
from labrig.instance_lock import LOCK_FILENAME, InstanceLock, StoreInUseError

HOLD = """
import sys, time
from pathlib import Path
from labrig.instance_lock import InstanceLock
InstanceLock(Path(sys.argv[1])).acquire()
print("held", flush=True)
time.sleep(120)
"""


def test_a_second_lock_on_the_same_store_is_refused_with_who_holds_it(tmp_path: Path) -> None:
    first = InstanceLock(tmp_path)
    first.acquire()
    with pytest.raises(StoreInUseError) as refused:
        InstanceLock(tmp_path).acquire()
    error = refused.value
    assert isinstance(error, StoreError) and isinstance(error, LabrigError)
    assert error.code == "LABRIG_STORE_IN_USE"
    assert f"process {os.getpid()}" in error.message and str(tmp_path) in error.message
    assert (
        "close it and start Labrig again" in error.message
        and "Nothing was changed" in error.message
    )
    first.release()
    InstanceLock(tmp_path).acquire()  # free again once released


def test_the_lock_file_says_who_holds_it_and_is_emptied_on_release(tmp_path: Path) -> None:
    with InstanceLock(tmp_path) as lock:
        holder = json.loads((tmp_path / LOCK_FILENAME).read_text())
        assert (
            holder["pid"] == os.getpid() and holder["host"] and holder["user"] and holder["since"]
        )
        assert lock.holder() is not None and lock.holder().pid == os.getpid()  # type: ignore[union-attr]
    assert (tmp_path / LOCK_FILENAME).read_bytes() == b""
    assert InstanceLock(tmp_path).holder() is None


def test_a_lock_held_by_another_process_is_refused_and_freed_when_that_process_dies(
    tmp_path: Path,
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(StoreInUseError, match=f"process {proc.pid} "):
            InstanceLock(tmp_path).acquire()
    finally:
        proc.kill()  # no clean-up runs: the operating system must release the lock
        proc.wait(10)
    deadline = time.monotonic() + 5
    while True:
        try:
            InstanceLock(tmp_path).acquire()
            break
        except StoreInUseError:
            assert time.monotonic() < deadline, "the lock of a killed process was not released"
            time.sleep(0.05)


def test_a_garbled_lock_file_does_not_stop_the_refusal(tmp_path: Path) -> None:
    first = InstanceLock(tmp_path)
    first.acquire()
    (tmp_path / LOCK_FILENAME).write_bytes(b"\x00not json")
    with pytest.raises(StoreInUseError, match="another process"):
        InstanceLock(tmp_path).acquire()
    first.release()


def test_on_a_shared_catalog_each_workstation_has_its_own_lock_in_the_shared_folder(
    tmp_path: Path,
) -> None:
    """With --db the data folder is the lab's share: another workstation's window must not
    lock this one out."""
    mine = InstanceLock(tmp_path, shared_catalog=True)
    mine.acquire()
    try:
        assert mine.path.name.startswith("labrig-") and mine.path.name.endswith(".lock")
        # the single-workstation lock is a different file
        other_folder_lock = InstanceLock(tmp_path)
        other_folder_lock.acquire()
        other_folder_lock.release()
        with pytest.raises(StoreInUseError):
            # but not twice on this workstation
            InstanceLock(tmp_path, shared_catalog=True).acquire()
    finally:
        mine.release()
