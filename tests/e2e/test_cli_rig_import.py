"""``labrig import --rig … --camera PLACE=FILE … --sync flash``: videos of the virtual rig recorded
as separate devices would, started at known instants, imported as one attempt with the offsets
found from the flash, and the phase between free-running cameras reported by rig.sync."""

from __future__ import annotations

import json
from pathlib import Path

from labrig.scenarios.rig_videos import write_rig_videos
from tests.support.cli import assert_typed, labrig

STARTS = (0.3137, 0.7021, 0.5555)
FRAME_MS = 1000 / 30


def _rig(store: Path) -> None:
    made = labrig(
        store,
        "rigs",
        "add",
        "trio",
        *("--device", "virtual:rig-1@640x360@30"),
        *("--device", "virtual:rig-2@640x360@30"),
        *("--device", "virtual:rig-3@640x360@30"),
    )
    assert made.returncode == 0, made.stderr


def test_videos_from_separate_devices_become_one_synchronised_attempt(tmp_path: Path) -> None:
    store = tmp_path / "store"
    _rig(store)
    front, right, back = write_rig_videos(tmp_path / "videos", STARTS, 3.5, scene="flash")
    imported = labrig(
        store,
        "import",
        "--rig",
        "trio",
        *("--camera", f"right={right}", "--camera", f"front={front}", "--camera", f"back={back}"),
        "--sync",
        "flash",
        "--json",
    )
    assert imported.returncode == 0, imported.stderr
    summary = json.loads(imported.stdout)
    # in the rig's order, whatever the order given
    assert [c["place"] for c in summary["captures"]] == ["front", "right", "back"]
    offsets = {c["name"]: c["offset_ms"] for c in summary["posthoc"]["cameras"]}
    for place, start in zip(("front", "right", "back"), STARTS, strict=True):
        assert abs(offsets[place] - (start - STARTS[0]) * 1000) <= FRAME_MS / 2, offsets
    assert summary["posthoc"]["trustworthy"] is True

    # the captures are the rig's devices; rig.sync measures the phase left between the cameras,
    # which free-ran: up to half a frame apart, over a quarter of one, so the result is degraded
    captures = [
        json.loads(line) for line in labrig(store, "captures", "--json").stdout.splitlines()
    ]
    assert sorted(c["device_id"] for c in captures) == [f"virtual:rig-{n}" for n in (1, 2, 3)]
    drained = labrig(store, "worker", "--drain")
    assert drained.returncode == 0, drained.stderr
    jobs = [json.loads(line) for line in labrig(store, "jobs", "--json").stdout.splitlines()]
    [sync_job] = [j for j in jobs if j["stage_id"] == "rig.sync"]
    assert sync_job["state"] == "SucceededDegraded", sync_job


def test_a_rig_import_that_cannot_be_synchronised_is_refused_and_stores_nothing(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    _rig(store)
    front, right = write_rig_videos(tmp_path / "dark", STARTS[:2], 2.0, scene="markers")
    refused = labrig(
        store,
        "import",
        *("--rig", "trio", "--camera", f"front={front}", "--camera", f"right={right}"),
        *("--sync", "flash"),
    )
    assert_typed(refused)
    assert refused.returncode == 2 and "LABRIG_SYNC_NOT_FOUND" in refused.stderr
    assert labrig(store, "captures", "--json").stdout == ""
    wrong = labrig(
        store,
        "import",
        "--rig",
        "trio",
        "--camera",
        f"side={front}",
        "--camera",
        f"front={right}",
        "--sync",
        "flash",
    )
    assert wrong.returncode == 2 and "'side' is not one of them" in wrong.stderr


def test_offsets_that_are_not_trustworthy_block_the_attempts_sync(tmp_path: Path) -> None:
    store = tmp_path / "store"
    _rig(store)
    front, right = write_rig_videos(tmp_path / "dim", STARTS[:2], 3.0, scene="flash", gain=6.0)
    imported = labrig(
        store,
        "import",
        *("--rig", "trio", "--camera", f"front={front}", "--camera", f"right={right}"),
        *("--sync", "flash"),
    )
    assert_typed(imported)
    assert imported.returncode == 1 and "NOT TRUSTWORTHY" in imported.stdout
    assert "the flash is faint" in imported.stdout
    assert labrig(store, "worker", "--drain").returncode == 0
    jobs = [json.loads(line) for line in labrig(store, "jobs", "--json").stdout.splitlines()]
    [sync_job] = [j for j in jobs if j["stage_id"] == "rig.sync"]
    assert sync_job["state"] == "BlockedByQuality"
    assert "not trustworthy" in (sync_job["error_message"] or "")


def test_motion_sync_from_the_command_line_is_within_a_frame(tmp_path: Path) -> None:
    store = tmp_path / "store"
    _rig(store)
    front, right = write_rig_videos(tmp_path / "moving", STARTS[:2], 6.0, scene="markers")
    imported = labrig(
        store,
        "import",
        *("--rig", "trio", "--camera", f"front={front}", "--camera", f"right={right}"),
        *("--sync", "motion", "--json"),
    )
    assert imported.returncode == 0, imported.stdout + imported.stderr
    posthoc = json.loads(imported.stdout)["posthoc"]
    assert posthoc["method"] == "motion" and posthoc["trustworthy"] is True
    offset = posthoc["cameras"][1]["offset_ms"]
    assert abs(offset - (STARTS[1] - STARTS[0]) * 1000) <= FRAME_MS, posthoc
