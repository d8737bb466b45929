"""kill -9 of ``labrig record --rig`` while it records: on the next start every camera's capture and
the force plate's are salvaged and the rig recording becomes one attempt of all of them, marked
interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

from labrig.store import open_store
from labrig.store.models import Attempt, AttemptCapture, Capture, Job, RigRecording
from tests.support.cli import labrig

REPO = Path(__file__).resolve().parents[3]


def test_a_rig_recording_killed_mid_way_becomes_one_interrupted_attempt(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    made = labrig(
        store_dir,
        "rigs",
        "add",
        "trio",
        *("--device", "virtual:rig-1@640x360@30"),
        *("--device", "virtual:rig-2@640x360@30"),
        *("--device", "virtual:rig-3@640x360@30"),
        *("--device", "virtual:plate-1"),
    )
    assert made.returncode == 0, made.stderr
    child = subprocess.Popen(
        [
            *(sys.executable, "-m", "labrig", "--store", str(store_dir)),
            *("record", "--rig", "trio", "--seconds", "60", "--segment-seconds", "0.5", "--json"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )
    assert child.stdout is not None
    try:
        # until every camera has written over a second of frames (two closed segments each)
        for line in child.stdout:
            if min(c["frames"] for c in json.loads(line)["cameras"]) >= 40:
                break
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(30)
    assert child.returncode == -signal.SIGKILL

    recovered = labrig(store_dir, "recover", "--json")
    assert recovered.returncode == 0, recovered.stderr
    items = json.loads(recovered.stdout)
    assert sorted(i["outcome"] for i in items) == [
        "rig attempt",
        "salvaged",
        "salvaged",
        "salvaged",
        "salvaged",
    ]

    store = open_store(store_dir)
    try:
        with store.read() as db:
            [row] = db.scalars(select(RigRecording))
            attempt = db.get(Attempt, row.attempt_id)
            linked = list(
                db.scalars(
                    select(AttemptCapture.capture_id)
                    .where(AttemptCapture.attempt_id == row.attempt_id)
                    .order_by(AttemptCapture.position)
                )
            )
            captures = [db.get(Capture, cid) for cid in linked]
            stages = set(db.scalars(select(Job.stage_id).where(Job.attempt_id == row.attempt_id)))
    finally:
        store.close()
    assert row.state == "interrupted" and attempt is not None
    assert attempt.note is not None and attempt.note.startswith("Interrupted: Labrig stopped")
    # every capture, in the rig's order, salvaged with the frames (the plate: samples) it had
    # written, the plate's open chunk kept up to its last whole row
    assert linked == [d["capture_id"] for d in json.loads(row.devices)]
    assert all(c is not None and c.state == "salvaged" and c.frame_count >= 30 for c in captures)
    plate = captures[3]
    assert plate is not None and json.loads(plate.mode)["kind"] == "samples"
    sync = json.loads(row.sync or "null")
    assert sync is not None and sync["frame_sets"] >= 30
    # a second of frames is 1000 samples: the plate recorded as long as the cameras, none lost
    figures = sync["instruments"]["plate"]
    assert figures["lost"] == 0 and figures["samples"] >= 1000 * (sync["instants"] - 2) / 30
    assert "rig.sync" in stages
    # recovery again finds nothing more to do: one attempt, never two
    again = labrig(store_dir, "recover", "--json")
    assert json.loads(again.stdout) == []
