"""``labrig rigs`` and ``labrig record --rig``: a rig made, listed, recorded into one attempt and
removed from the command line, on the virtual rig and on two MJPEG cameras over real sockets."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import assert_typed, labrig
from tests.support.mjpeg_server import MjpegServer


def last_json(stdout: str) -> dict[str, object]:
    """The summary a ``--json`` recording prints after its progress lines."""
    value: dict[str, object] = json.loads(stdout[stdout.index("{\n") :])
    return value


def test_a_rig_is_made_recorded_into_one_attempt_and_removed(tmp_path: Path) -> None:
    store = tmp_path / "store"
    listed = labrig(store, "rigs", "--json")
    assert listed.returncode == 0, listed.stderr
    [builtin] = json.loads(listed.stdout)["rigs"]
    assert builtin["name"] == "virtual" and builtin["builtin"] is True
    assert [d["place"] for d in builtin["devices"]] == ["front", "right", "back", "left"]

    made = labrig(
        store,
        "rigs",
        "add",
        "pair",
        "--device",
        "virtual:rig-1@640x360@30",
        "--device",
        "side=virtual:rig-4@640x360@30",
    )
    assert made.returncode == 0, made.stderr
    assert "Rig pair made of 2 verified devices" in made.stdout and "side" in made.stdout

    recorded = labrig(store, "record", "--rig", "pair", "--seconds", "2", "--json")
    assert recorded.returncode == 0, recorded.stderr
    summary = last_json(recorded.stdout)
    captures = summary["captures"]
    assert isinstance(captures, list) and [c["place"] for c in captures] == ["front", "side"]
    assert all(c["state"] == "committed" and c["frames"] >= 45 for c in captures)
    sync = summary["sync"]
    assert isinstance(sync, dict) and sync["frame_sets"] >= 45
    assert sync["unmatched"] == {"front": 0, "side": 0}
    # the progress lines came first, one JSON object a line
    progress = recorded.stdout[: recorded.stdout.index("{\n")].splitlines()
    assert progress and all("spread_p99_ms" in json.loads(line) for line in progress)

    # the attempt has both captures and its rig.sync job
    jobs = [json.loads(line) for line in labrig(store, "jobs", "--json").stdout.splitlines()]
    assert {j["stage_id"] for j in jobs if j["attempt_id"] == summary["attempt_id"]} >= {
        "rig.sync",
        "media.qc",
    }

    removed = labrig(store, "rigs", "remove", "pair")
    assert removed.returncode == 0 and "recordings and their attempts stay" in removed.stdout
    gone = labrig(store, "record", "--rig", "pair", "--seconds", "1")
    assert_typed(gone)
    assert gone.returncode == 2 and "LABRIG_RIG_NOT_FOUND" in gone.stderr


def test_bad_rigs_are_refused_with_words_to_act_on(tmp_path: Path) -> None:
    store = tmp_path / "store"
    for args, code in (
        (["--device", "virtual:rig-1", "--device", "virtual:rig-2@800x600@25"], "MODE_UNSUPPORTED"),
        (["--device", "virtual:rig-1", "--device", "uvc:nothing:here"], "RIG_DEVICE_UNAVAILABLE"),
        (["--device", "virtual:rig-1"], "RIG_INVALID"),
    ):
        refused = labrig(store, "rigs", "add", "bad", *args)
        assert_typed(refused)
        assert refused.returncode == 2 and f"LABRIG_{code}" in refused.stderr, refused.stderr
    assert json.loads(labrig(store, "rigs", "--json").stdout)["rigs"][1:] == []
    builtin = labrig(store, "rigs", "remove", "virtual")
    assert builtin.returncode == 2 and "built in" in builtin.stderr


def test_a_rig_of_two_mjpeg_cameras_over_http_records_with_its_spread_measured(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    with (
        MjpegServer(fps=30.0, size=(640, 480)) as left,
        MjpegServer(fps=30.0, size=(640, 480)) as right,
    ):
        made = labrig(
            store,
            "rigs",
            "add",
            "http",
            "--device",
            f"left=ip:{left.url}@640x480@30",
            "--device",
            f"right=ip:{right.url}@640x480@30",
        )
        assert made.returncode == 0, made.stderr
        recorded = labrig(store, "record", "--rig", "http", "--seconds", "2", "--json")
    assert recorded.returncode == 0, recorded.stderr
    summary = last_json(recorded.stdout)
    captures = summary["captures"]
    assert isinstance(captures, list) and all(c["frames"] >= 30 for c in captures)
    sync = summary["sync"]
    assert isinstance(sync, dict)
    # two servers of their own: their frames arrive at independent times, stamped on arrival
    assert sync["spread_ms"] is not None and 0 <= sync["spread_ms"]["p50"] <= 1000 / 30 / 2
    assert sync["drift_ppm"] == {"left": None, "right": None}  # no clocks of their own


def test_a_rig_with_the_force_plate_is_recorded_from_the_command_line(tmp_path: Path) -> None:
    store = tmp_path / "store"
    made = labrig(
        store,
        "rigs",
        "add",
        "jump",
        *("--device", "virtual:rig-1@640x360@30"),
        *("--device", "virtual:rig-2@640x360@30"),
        *("--device", "virtual:plate-1"),
    )
    assert made.returncode == 0, made.stderr
    listed = json.loads(labrig(store, "rigs", "--json").stdout)["rigs"]
    jump = next(r for r in listed if r["name"] == "jump")
    assert jump["devices"][2] == {
        "device_id": "virtual:plate-1",
        "mode": "6 ch @ 1000 Hz",
        "place": "plate",
    }

    recorded = labrig(store, "record", "--rig", "jump", "--seconds", "2")
    assert recorded.returncode == 0, recorded.stderr
    lines = recorded.stdout.splitlines()
    [plate] = [line for line in lines if line.strip().startswith("plate ")]
    samples = int(plate.split()[1])
    assert plate.split()[2:5] == ["samples", "0", "lost"] and samples >= 1900, plate
    [sync] = [line for line in lines if line.startswith("Sync:")]
    assert f"plate {samples} samples at " in sync and ", 0 lost" in sync


def test_the_virtual_rig_records_its_board_on_the_floor_when_asked(tmp_path: Path) -> None:
    import cv2

    from labrig.capture import iter_frames, load_capture
    from labrig.store import open_store

    store_dir = tmp_path / "store"
    made = labrig(
        store_dir,
        "rigs",
        "add",
        "pair",
        *("--device", "virtual:rig-1@1280x720@30"),  # the side cameras see the floor's board
        *("--device", "virtual:rig-2@1280x720@30"),  # at 10 px a square: 720p is the least
    )
    assert made.returncode == 0, made.stderr
    recorded = labrig(
        store_dir, "record", "--rig", "pair", "--seconds", "1", "--rig-scene", "floor", "--json"
    )
    assert recorded.returncode == 0, recorded.stderr
    summary = last_json(recorded.stdout)
    captures = summary["captures"]
    assert isinstance(captures, list)
    store = open_store(store_dir)
    try:
        for capture in captures:
            media = load_capture(store, capture["manifest_sha256"])
            first = next(iter_frames(media.segments[0]))
            found, _ = cv2.findChessboardCorners(cv2.cvtColor(first, cv2.COLOR_BGR2GRAY), (9, 6))
            assert found, f"{capture['place']} shows the floor's chessboard"
    finally:
        store.close()
    wrong = labrig(
        store_dir, "record", "--device", "virtual:rig-1", "--seconds", "1", "--rig-scene", "board"
    )
    assert_typed(wrong)
    assert wrong.returncode == 2 and "--rig" in wrong.stderr
