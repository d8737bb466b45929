"""A full disk (issue 16): commands stop with LABRIG_DISK_FULL, keep what was committed, and leave
no half-made file; once there is room, the same commands work.

The disk is real: a small tmpfs mounted in a private mount namespace (``unshare``), so it is gone
when the test's shell ends. Each test is one shell script run inside it; what the test checks is
printed by that script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import REPO, write_video

pytestmark = pytest.mark.slow


def _on_a_small_disk(tmp_path: Path, size: str, script: str) -> str:
    """Run ``script`` (sh) with a ``size`` tmpfs mounted at ``$DISK`` and ``labrig`` a function
    running the command on the store ``$DISK/s``; its output, with any ``Traceback`` failing."""
    disk = tmp_path / "disk"
    disk.mkdir()
    prelude = (
        f'DISK={disk}; mount -t tmpfs -o size={size} tmpfs "$DISK"; '
        f'labrig() {{ {sys.executable} -m labrig --store "$DISK/s" "$@"; }}; '
        'fill() { head -c $(( $(df --output=avail -B1 "$DISK" | tail -1) - 4096 )) /dev/zero '
        '> "$DISK/filler" 2>/dev/null || true; }; '
    )
    namespace = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "-rm"]
    assert shutil.which("unshare"), "util-linux's unshare is needed for the full-disk tests"
    ran = subprocess.run(
        [*namespace, "sh", "-c", prelude + script],
        capture_output=True,
        text=True,
        errors="replace",  # OpenCV's own messages about a cut-off file are not always UTF-8
        timeout=240,
        cwd=REPO,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )
    assert "Traceback" not in ran.stdout + ran.stderr, ran.stdout + ran.stderr
    assert "mount:" not in ran.stderr, f"could not mount a small disk here: {ran.stderr}"
    return ran.stdout + ran.stderr


def test_an_import_larger_than_the_room_left_is_refused_and_the_next_file_imported(
    tmp_path: Path,
) -> None:
    big, small = tmp_path / "big.avi", tmp_path / "small.avi"
    write_video(big, frames=900)  # ~4 MB of noise
    write_video(small, frames=10, seed=3)
    assert big.stat().st_size > 3_500_000

    said = _on_a_small_disk(
        tmp_path,
        "3m",
        f"labrig import {big} {small}; echo import-rc=$?; "
        'echo provisional=$(find "$DISK/s/captures" -type f | wc -l); '
        "labrig captures --json | wc -l | sed 's/^/captures=/'; "
        "labrig verify --json > /dev/null; echo verify-rc=$?",
    )

    assert f"refused {big}: LABRIG_DISK_FULL: the disk is full: big.avi was not imported" in said
    assert f"imported {small}: capture" in said
    for line in ("import-rc=1", "provisional=0", "captures=1", "verify-rc=0"):
        assert line in said, said


def test_a_full_disk_refuses_every_command_with_the_code_and_changes_nothing(
    tmp_path: Path,
) -> None:
    video = tmp_path / "trial.avi"
    write_video(video, frames=10)

    said = _on_a_small_disk(
        tmp_path,
        "8m",
        f"labrig import {video} > /dev/null; "
        'before=$(cd "$DISK/s" && find . -type f -exec sha256sum {} + | sort); fill; '
        "for command in captures verify 'worker --drain' 'import " + str(video) + "' "
        "'record --device virtual:markers --seconds 1'; do "
        f'  labrig $command > /dev/null 2> {tmp_path}/err.txt; echo "$command rc=$?"; '
        f"cat {tmp_path}/err.txt; done; "
        'after=$(cd "$DISK/s" && find . -type f -exec sha256sum {} + | sort); '
        '[ "$before" = "$after" ] && echo unchanged; '
        'rm "$DISK/filler"; labrig captures --json',
    )

    for command in ("captures", "verify", "worker --drain", "import", "record"):
        assert f"{command}" in said
    assert said.count("LABRIG_DISK_FULL: the disk is full") == 5, said
    assert said.count(" rc=2") == 5 and "unchanged" in said, said
    [row] = [json.loads(line) for line in said.splitlines() if line.startswith("{")]
    assert row["state"] == "committed" and row["frames"] == 10  # once there is room, as before


def test_a_disk_that_fills_while_recording_stops_it_and_keeps_the_closed_segments(
    tmp_path: Path,
) -> None:
    said = _on_a_small_disk(
        tmp_path,
        "6m",
        'mkdir "$DISK/s"; '
        f'{sys.executable} -m tests.integration.hostile.record_until_full "$DISK/s" "$DISK/go" & '
        'recording=$!; while [ ! -e "$DISK/go" ]; do sleep 0.05; done; fill; wait $recording; '
        'rm "$DISK/filler"; labrig recover --json; labrig verify --json > /dev/null; '
        "echo verify-rc=$?",
    )

    assert "stop reason: " in said and "No space left on device" in said, said
    assert "stopped: LABRIG_DISK_FULL: the disk is full: recording stopped. The " in said, said
    assert "closed segments are kept in its folder; 'labrig recover'" in said
    [recovered] = json.loads(said[said.index("[") : said.rindex("]") + 1])
    assert recovered["outcome"] == "salvaged" and recovered["frames"] > 0  # what was safely written
    assert "verify-rc=0" in said


def test_a_disk_that_fills_while_the_worker_runs_stops_it_and_the_next_worker_finishes(
    tmp_path: Path,
) -> None:
    # room for the claims but not for every outcome (64 KB), then for the outcomes but not for
    # publishing their results (400 KB): both stop with the code; once there is room, the next
    # worker runs what was not recorded and publishes every result
    said = _on_a_small_disk(
        tmp_path,
        "16m",
        f'{sys.executable} -m tests.integration.hostile.queue_attempts "$DISK/q" 2; '
        'for room in 65536 400000; do rm -rf "$DISK/s"; cp -a "$DISK/q" "$DISK/s"; '
        '  head -c $(( $(df --output=avail -B1 "$DISK" | tail -1) - room )) /dev/zero '
        '    > "$DISK/filler" 2>/dev/null; '
        '  labrig worker --drain; echo "room $room: worker rc=$?"; rm "$DISK/filler"; '
        "  labrig worker --drain > /dev/null; "
        '  labrig jobs --json | grep -c \'"state": "Succeeded\'; '
        '  labrig review list --json | python3 -c "import json, sys; '
        "print('published', len(json.load(sys.stdin)))\"; "
        '  labrig verify > /dev/null; echo "verify rc=$?"; '
        "done",
    )

    assert "6 jobs queued" in said, said
    assert "room 65536: worker rc=2" in said, said
    assert "the outcome of the jobs that ended is not recorded" in said, said
    # publishing meets the full disk: the worker's last delivery either fails with the code
    # (rc 2), or finds room again once its own writes are checkpointed, after a pass that met the
    # full disk paused (which of the two depends on when SQLite reuses its log: both are right)
    assert "results and other consequences of what was committed are not delivered yet" in said
    assert "room 400000: worker rc=2" in said or (
        "room 400000: worker rc=0" in said and "event dispatch paused: the disk is full" in said
    ), said
    assert said.count("\n6\n") == 2, said  # every job succeeded in the end, each time
    assert said.count("published 2\n") == 2, said
    assert said.count("verify rc=0") == 2, said


def test_a_disk_that_fills_while_the_window_records_stops_it_with_the_words(
    tmp_path: Path,
) -> None:
    # the window's test, run by pytest in the namespace with its store on the small disk
    said = _on_a_small_disk(
        tmp_path,
        "1600m",  # the window plans 600 s at the raw rate (1.4 GB) before it starts
        f'{sys.executable} -m pytest -q -s -p no:cacheprovider --basetemp "$DISK/t" '
        "tests/ui/window_on_a_full_disk.py; echo window-rc=$?",
    )

    assert "window said: The recording could not be saved: the disk is full" in said, said
    assert "window-rc=0" in said, said


def test_an_export_into_a_disk_without_room_fails_with_its_code_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    """Issue 20: the bundle, its C3D, NWB and overlay video do not fit a 400 KB disk; the export
    stops with LABRIG_EXPORT_FAILED and leaves nothing in the folder (not even the partial one)."""
    from tests.support.results import make_results

    store = tmp_path / "store"
    published = make_results(store).published_id
    export = f'{sys.executable} -m labrig --store {store} export {published} --to "$DISK/out"'
    said = _on_a_small_disk(
        tmp_path,
        "400k",
        f"{export} --format csv,c3d,nwb,video; echo export-rc=$?; "
        'echo left=$(ls -A "$DISK/out" | wc -l); '
        # once there is room (a bundle without the video fits), the same export works
        f"{export} --format csv,c3d > /dev/null; echo again-rc=$?",
    )

    assert "labrig: LABRIG_EXPORT_FAILED: the export into" in said, said
    assert "nothing was exported" in said
    for line in ("export-rc=2", "left=0", "again-rc=0"):
        assert line in said, said
