"""kill -9 of a recording process at random moments and right after each rename and the
commit: after recovery, no committed capture is lost or mismatched and every provisional
capture is resolved."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import select

from labrig.capture.commit import count_frames
from labrig.capture.recorder import provisional_root
from labrig.capture.recovery import recover
from labrig.fsutil import sha256_file
from labrig.store import Store, open_store
from labrig.store.blobs import BlobStore
from labrig.store.models import Capture, CaptureSegment

REPO = Path(__file__).resolve().parents[3]
CHILD = [sys.executable, "-m", "tests.integration.recording.record_child"]
# 0.8 s of the camera: three 0.25 s segments, the same renames on every run
LENGTH = ("--frames", "24")


def _run_child(store: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CHILD, str(store), *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


def _check_store(store: Store) -> dict[str, int]:
    """Every capture is resolved; every committed one verifies blob by blob."""
    blobs = BlobStore(store.media_dir)
    states: dict[str, int] = {}
    with store.read() as s:
        captures = list(s.scalars(select(Capture)))
        segments = list(s.scalars(select(CaptureSegment)))
    for capture in captures:
        states[capture.state] = states.get(capture.state, 0) + 1
        assert capture.state in {"committed", "salvaged", "quarantined"}, (
            capture.id,
            capture.state,
        )
        if capture.state == "quarantined":
            assert capture.report and "quarantined" in capture.report
            continue
        own = [seg for seg in segments if seg.capture_id == capture.id]
        assert own and sum(seg.frames for seg in own) == capture.frame_count
        for seg in own:
            path = blobs.path(seg.media_sha256, ".avi")
            assert sha256_file(path)[0] == seg.media_sha256, f"blob {path} mismatched"
            assert count_frames(path) == seg.frames
    leftovers = list(provisional_root(store).iterdir()) if provisional_root(store).exists() else []
    assert leftovers == [], f"unresolved provisional captures: {leftovers}"
    return states


def test_kill_right_after_each_rename_and_after_the_commit(tmp_path: Path) -> None:
    root = tmp_path / "store"
    open_store(root).close()
    clean = _run_child(root, *LENGTH)  # a clean run, to count its renames
    assert clean.returncode == 0, clean.stderr
    renames = int(clean.stdout.split("renames")[1])
    assert renames >= 8  # manifest rewrites per segment, moves into the media store
    kill_points = [("--kill-at-rename", str(k)) for k in range(1, renames + 1)] + [
        ("--kill-at-cleanup",)
    ]
    kills = 0
    for point in kill_points:
        code = _run_child(root, *LENGTH, *point).returncode
        # later runs may rename less: the virtual camera repeats itself, and identical segments are
        # already in the media store (stored once, by content)
        assert code in (0, -signal.SIGKILL), point
        kills += code == -signal.SIGKILL
        store = open_store(root)
        recover(store)
        states = _check_store(store)
        store.close()
    assert kills >= 8, kills
    assert states.get("committed", 0) >= 2 and states.get("salvaged", 0) >= 5, states


def test_kill_at_random_moments_many_times(tmp_path: Path) -> None:
    root = tmp_path / "store"
    open_store(root).close()
    rng = random.Random(20261129)
    outcomes: list[str] = []
    for _ in range(12):
        # it records until it is killed: at a random moment once its first segment is closed
        # (manifest rewritten)
        proc = subprocess.Popen(
            [*CHILD, str(root), "--seconds", "60", "--report-renames"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        lines = iter(proc.stdout.readline, "")
        assert "started" in (line.strip() for line in lines), "the recording did not start"
        # rename 1 wrote the first manifest before "started"; rename 2 is the first segment's
        assert "rename 2" in (line.strip() for line in lines), (
            "the recording ended before its first segment"
        )
        time.sleep(rng.uniform(0.0, 1.5))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        store = open_store(root)
        report = recover(store)
        outcomes += [item.outcome for item in report.items]
        _check_store(store)
        store.close()
    assert set(outcomes) <= {"salvaged", "tidied", "quarantined"}
    assert outcomes.count("salvaged") >= 6, outcomes  # most kills landed mid-recording
