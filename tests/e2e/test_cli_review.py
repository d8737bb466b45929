"""``labrig review``, ``labrig users`` and ``labrig audit`` as a lab runs them: real processes, real
results, each user by their login."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from labrig.cli import main
from labrig.store.dialects import drop_append_only_ddl
from tests.support.results import TemplateResults, copy_store, make_results

REPO = Path(__file__).resolve().parents[2]


def labrig(store: Path, *args: str, user: str = "ada") -> subprocess.CompletedProcess[str]:
    env = os.environ | {"QT_QPA_PLATFORM": "offscreen", "LOGNAME": user}
    return subprocess.run(
        [sys.executable, "-m", "labrig", "--store", str(store), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=env,
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TemplateResults]:
    root = tmp_path_factory.mktemp("cli-review") / "store"
    return root, make_results(root)


@pytest.fixture
def store(template: tuple[Path, TemplateResults], tmp_path: Path) -> Path:
    return copy_store(template[0], tmp_path / "store")


def test_a_reviewer_revises_a_result_and_the_trail_verifies(
    store: Path, template: tuple[Path, TemplateResults]
) -> None:
    ids = template[1]
    listed = {
        r["result_id"]: r for r in json.loads(labrig(store, "review", "list", "--json").stdout)
    }
    assert {listed[ids.published_id]["status"], listed[ids.blocked_id]["status"]} == {
        "published",
        "blocked",
    }
    before = json.loads(labrig(store, "review", "show", ids.published_id, "--json").stdout)
    assert before["revisions"] == [] and all(
        f["automatic"] == f["effective"] for f in before["fields"]
    )

    revised = labrig(
        store,
        "review",
        "revise",
        ids.published_id[:8],
        "--set",
        "track:0.path_length=123.5",
        "--set",
        "track:2.peak_speed=9",
        "--reason",
        "marker 0 occluded in frames 10-20",
    )
    assert revised.returncode == 0, revised.stderr
    assert "Revision 1 of result" in revised.stdout and "→ 123.5" in revised.stdout

    after = json.loads(labrig(store, "review", "show", ids.published_id, "--json").stdout)
    fields = {f["field"]: f for f in after["fields"]}
    assert (
        fields["track:0.path_length"]["effective"] == 123.5
        and fields["track:0.path_length"]["revision"] == 1
    )
    assert fields["track:0.path_length"]["automatic"] == before["fields"][0]["automatic"]
    assert after["automatic_digest"] == before["automatic_digest"] and after["automatic_intact"]
    [revision] = after["revisions"]
    assert (revision["reviewer"], revision["reason"], revision["base_id"]) == (
        "ada",
        "marker 0 occluded in frames 10-20",
        ids.published_id,
    )
    text = labrig(store, "review", "show", ids.published_id).stdout
    assert "(revision 1)" in text and "marker 0 occluded" in text

    [entry] = json.loads(labrig(store, "audit", "--json").stdout)
    assert (entry["seq"], entry["action"], entry["actor"], entry["object_id"]) == (
        1,
        "review.revise",
        "ada",
        ids.published_id,
    )
    verified = labrig(store, "audit", "verify")
    assert verified.returncode == 0 and "Audit trail intact: 1 entries" in verified.stdout
    names = [
        json.loads(line)["name"] for line in labrig(store, "events", "--json").stdout.splitlines()
    ]
    assert names.count("review.revised") == 1


def test_bad_revisions_are_refused_with_a_code_and_nothing_stored(
    store: Path, template: tuple[Path, TemplateResults], capsys: pytest.CaptureFixture[str]
) -> None:
    ids = template[1]
    cases = [
        (
            [ids.blocked_id, "--set", "track:0.path_length=1", "--reason", "x"],
            "LABRIG_RESULT_NOT_PUBLISHED",
        ),
        (["deadbeef", "--set", "track:0.path_length=1", "--reason", "x"], "LABRIG_UNKNOWN_RESULT"),
        (
            [ids.published_id, "--set", "track:0.path_length=1", "--reason", "  "],
            "LABRIG_REASON_REQUIRED",
        ),
        (
            [ids.published_id, "--set", "track:4.path_length=1", "--reason", "x"],
            "LABRIG_UNKNOWN_FIELD",
        ),
        ([ids.published_id, "--set", "track:0.speed=1", "--reason", "x"], "LABRIG_UNKNOWN_FIELD"),
        (
            [ids.published_id, "--set", "track:0.path_length=fast", "--reason", "x"],
            "LABRIG_NOT_A_NUMBER",
        ),
        (
            [ids.published_id, "--set", "track:0.path_length", "--reason", "x"],
            "LABRIG_FIELD_SYNTAX",
        ),
        ([ids.published_id, "--reason", "x"], "LABRIG_FIELD_SYNTAX"),
    ]
    for args, code in cases:
        assert main(["--store", str(store), "review", "revise", *args]) == 2, code
        assert f"labrig: {code}: " in capsys.readouterr().err
    assert main(["--store", str(store), "audit", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["--store", str(store), "review", "list", "--json"]) == 0
    assert all(r["revisions"] == 0 for r in json.loads(capsys.readouterr().out))


def test_roles_from_the_command_line(store: Path, template: tuple[Path, TemplateResults]) -> None:
    ids = template[1]
    roster = json.loads(labrig(store, "users", "--json", user="tom").stdout)
    assert roster == {"current_user": "tom", "enforced": False, "users": []}
    assert "Roles are not enforced" in labrig(store, "users", user="tom").stdout
    first = labrig(
        store, "users", "set-role", "tom", "technician", "--reason", "new hire", user="tom"
    )
    assert (
        first.returncode == 2
        and "LABRIG_ROLE_REQUIRED" in first.stderr
        and "first role" in first.stderr
    )
    assert (
        labrig(store, "users", "set-role", "ada", "admin", "--reason", "lab manager").returncode
        == 0
    )
    assert (
        labrig(store, "users", "set-role", "tom", "technician", "--reason", "new hire").returncode
        == 0
    )

    def revise_as_tom() -> subprocess.CompletedProcess[str]:
        return labrig(
            store,
            "review",
            "revise",
            ids.published_id,
            "--set",
            "track:0.extent=1",
            "--reason",
            "x",
            user="tom",
        )

    refused = revise_as_tom()
    assert refused.returncode == 2
    assert "LABRIG_ROLE_REQUIRED: revising a result needs the reviewer role" in refused.stderr
    assert "An admin (ada) can grant it: labrig users set-role tom reviewer" in refused.stderr
    promote = labrig(store, "users", "set-role", "tom", "admin", "--reason", "me", user="tom")
    assert promote.returncode == 2 and "assigning roles needs the admin role" in promote.stderr
    assert (
        labrig(store, "users", "set-role", "tom", "reviewer", "--reason", "trained").returncode == 0
    )
    allowed = revise_as_tom()
    assert allowed.returncode == 0, allowed.stderr

    roster = json.loads(labrig(store, "users", "--json").stdout)
    assert roster["enforced"] and {u["user"]: u["role"] for u in roster["users"]} == {
        "ada": "admin",
        "tom": "reviewer",
    }
    actions = [
        (e["action"], e["actor"]) for e in json.loads(labrig(store, "audit", "--json").stdout)
    ]
    assert actions == [
        ("roles.set", "ada"),
        ("roles.set", "ada"),
        ("roles.set", "ada"),
        ("review.revise", "tom"),
    ]


def test_audit_verify_names_the_first_broken_entry_after_tampering(
    store: Path, template: tuple[Path, TemplateResults]
) -> None:
    labrig(store, "users", "set-role", "ada", "admin", "--reason", "lab manager")
    for n in range(3):
        labrig(
            store,
            "review",
            "revise",
            template[1].published_id,
            "--set",
            f"track:1.extent={n + 1}",
            "--reason",
            f"pass {n}",
        )
    assert labrig(store, "audit", "verify").returncode == 0
    with sqlite3.connect(store / "labrig.db") as conn:
        update = "UPDATE audit_entries SET reason = 'pass 9' WHERE seq = 3"
        with pytest.raises(sqlite3.IntegrityError, match="LABRIG_APPEND_ONLY"):
            conn.execute(update)  # not even an admin's database tool may edit the trail
        for statement in drop_append_only_ddl("sqlite", ["audit_entries"]):
            conn.execute(statement)  # so an attacker removes the guard first
        conn.execute(update)
    broken = labrig(store, "audit", "verify")
    assert broken.returncode == 1 and "Audit trail BROKEN at entry 3" in broken.stdout
    report = json.loads(labrig(store, "audit", "verify", "--json").stdout)
    assert (report["intact"], report["first_broken"], report["head"]["seq"]) == (False, 3, 2)


def test_releases_capture_and_calibration_obey_roles_from_the_command_line(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(user: str, *args: str) -> tuple[int, str]:
        monkeypatch.setenv("LOGNAME", user)
        code = main(["--store", str(store), *args])
        return code, capsys.readouterr().err

    assert run("ada", "users", "set-role", "ada", "admin", "--reason", "lab manager")[0] == 0
    assert run("ada", "users", "set-role", "rita", "reviewer", "--reason", "analyst")[0] == 0
    code, err = run("rita", "releases", "rollback", "--reason", "drift")
    assert (
        code == 2
        and "LABRIG_ROLE_REQUIRED: activating or rolling back a release needs the admin role" in err
    )
    code, err = run("ada", "releases", "rollback", "--reason", "drift")
    # allowed; nothing is active to roll back
    assert code == 2 and "LABRIG_INVALID_TRANSITION" in err
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"not really a video")
    code, err = run("visitor", "import", str(video))
    assert code == 2 and "recording or importing captures needs the technician role" in err
    code, err = run(
        "visitor",
        "calibrate",
        str(video),
        "--board",
        "chessboard:9x6:25",
        "--device",
        "virtual:board",
        "--mode",
        "640x480@30",
    )
    assert code == 2 and "storing a calibration needs the technician role" in err


def test_a_result_whose_calibration_was_superseded_is_flagged_and_reprocessed_in_one_command(
    tmp_path: Path,
) -> None:
    from datetime import timedelta

    from labrig.bootstrap import bootstrap
    from labrig.calibration.camera import CalibrationThresholds
    from labrig.store import open_store, utcnow
    from tests.support.analysis_runs import analyse, calibrate_markers_camera, new_session, record

    root = tmp_path / "store"
    opened = open_store(root)
    services = bootstrap(store=opened)
    try:
        calibrate_markers_camera(services)
        session_id = new_session(services)
        analyse(services, session_id, record(services, session_id))
        newer = calibrate_markers_camera(
            services,
            thresholds=CalibrationThresholds(max_rms_px=0.9),
            now=utcnow() + timedelta(minutes=1),
        )
    finally:
        services.close()
        opened.close()

    listed = labrig(root, "review", "list")
    assert listed.returncode == 0, listed.stderr
    assert "(calibration changed)" in listed.stdout
    assert f"superseded by calibration {newer.id[:8]}" in listed.stdout
    [row] = json.loads(labrig(root, "review", "list", "--json").stdout)
    assert row["flags"] and "labrig review reprocess" in listed.stdout

    again = labrig(root, "review", "reprocess", row["result_id"], "--json")
    assert again.returncode == 0, again.stderr
    done = json.loads(again.stdout)
    assert done["result_id"] == row["result_id"] and done["attempt_id"] != row["attempt_id"]
    assert labrig(root, "worker", "--drain").returncode == 0
    results = json.loads(labrig(root, "review", "list", "--json").stdout)
    fresh = [r for r in results if r["attempt_id"] == done["attempt_id"]]
    assert len(fresh) == 1 and fresh[0]["status"] == "published" and fresh[0]["flags"] == []
    kept = [r for r in results if r["result_id"] == row["result_id"]]
    assert kept[0]["flags"] == row["flags"]  # the earlier result is kept, and still says why
    # a reprocess of nothing analysed is refused with its code
    missing = labrig(root, "review", "reprocess", "nosuchresult")
    assert missing.returncode == 2 and "LABRIG_" in missing.stderr


def test_a_reviewer_corrects_the_tracked_data_from_the_command_line(
    store: Path, template: tuple[Path, TemplateResults], capsys: pytest.CaptureFixture[str]
) -> None:
    rid = template[1].published_id
    corrected = labrig(
        store,
        "review",
        "correct",
        rid[:8],
        "--occlude",
        "0@10-17",
        "--fill",
        "0@10-17:spline",
        "--swap",
        "1,2@25",
        "--reason",
        "hand over marker 0; identities switched at 25",
    )
    assert corrected.returncode == 0, corrected.stderr
    assert "track 0 filled (spline) from frame 10 to 17" in corrected.stdout
    assert "tracks 1, 2 swapped from frame 25 on" in corrected.stdout
    shown = labrig(store, "review", "show", rid)
    assert "track 0 hidden from frame 10 to 17" in shown.stdout
    after = json.loads(labrig(store, "review", "show", rid, "--json").stdout)
    [revision] = after["revisions"]
    assert [o["kind"] for o in revision["operations"]] == ["occlude", "fill", "swap"]
    fields = {f["field"]: f for f in after["fields"]}
    # the swap exchanged the two tracks' last five frames: their lengths changed
    assert fields["track:1.path_length"]["effective"] != fields["track:1.path_length"]["automatic"]
    assert fields["track:1.path_length"]["revision"] == 1
    for args, code in (
        ([rid, "--fill", "0@0-29", "--reason", "x"], "LABRIG_CORRECTION_REFUSED"),
        ([rid, "--fill", "0@3-1", "--reason", "x"], "LABRIG_CORRECTION_SYNTAX"),
        ([rid, "--reason", "x"], "LABRIG_CORRECTION_SYNTAX"),
        ([rid, "--trim", "0-5", "--reason", " "], "LABRIG_REASON_REQUIRED"),
        ([rid, "--trim", "0-5", "--reason", "x", "--base", rid], "LABRIG_REVISION_CONFLICT"),
    ):
        assert main(["--store", str(store), "review", "correct", *args]) == 2, code
        assert f"labrig: {code}: " in capsys.readouterr().err
    assert main(["--store", str(store), "review", "list", "--json"]) == 0
    listed = {r["result_id"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed[rid]["revisions"] == 1


def test_a_reviewer_approves_a_result_and_a_later_correction_clears_it(
    store: Path, template: tuple[Path, TemplateResults], capsys: pytest.CaptureFixture[str]
) -> None:
    rid = template[1].published_id
    approved = labrig(store, "review", "approve", rid[:8], "--meaning", "approved", user="rita")
    assert approved.returncode == 0, approved.stderr
    assert "signed off as approved; effective result sha256 " in approved.stdout
    shown = labrig(store, "review", "show", rid)
    assert "Sign-off: Approved by rita at " in shown.stdout

    def signed_off() -> list[str]:
        listed = labrig(store, "review", "list", "--review", "signed-off", "--json")
        assert listed.returncode == 0, listed.stderr
        return [r["result_id"] for r in json.loads(listed.stdout)]

    assert signed_off() == [rid]
    corrected = labrig(store, "review", "correct", rid, "--trim", "2-27", "--reason", "settling")
    assert corrected.returncode == 0, corrected.stderr
    assert signed_off() == []  # the correction cleared it
    state = json.loads(labrig(store, "review", "show", rid, "--json").stdout)["sign_off"]
    assert (state["in_force"], state["meaning"], state["reviewer"], state["cleared_by"]) == (
        False,
        "approved",
        "rita",
        2,
    )
    assert (
        "Sign-off: Sign-off cleared: approved by rita"
        in labrig(store, "review", "show", rid).stdout
    )
    trail = labrig(store, "audit", "--object", rid, "--json")
    assert trail.returncode == 0, trail.stderr
    actions = [e["action"] for e in json.loads(trail.stdout)]
    assert actions.count("review.sign_off") == 1 and actions.count("review.revise") == 1
    for args, code in (
        ([rid, "--meaning", "fine"], "LABRIG_SIGNOFF_MEANING"),
        ([rid, "--meaning", "reviewed", "--base", rid], "LABRIG_REVISION_CONFLICT"),
    ):
        assert main(["--store", str(store), "review", "approve", *args]) == 2, code
        assert f"labrig: {code}: " in capsys.readouterr().err


def test_a_reviewer_undoes_a_correction_from_the_command_line(
    store: Path, template: tuple[Path, TemplateResults], capsys: pytest.CaptureFixture[str]
) -> None:
    rid = template[1].published_id
    before = json.loads(labrig(store, "review", "show", rid, "--json").stdout)["fields"]
    assert (
        labrig(store, "review", "correct", rid, "--trim", "2-27", "--reason", "x").returncode == 0
    )
    undone = labrig(store, "review", "undo", rid, "--revision", "1", "--reason", "not settling")
    assert undone.returncode == 0, undone.stderr
    assert "undoes revision 1" in undone.stdout
    shown = labrig(store, "review", "show", rid)
    assert "— undone by revision 2" in shown.stdout
    after = json.loads(labrig(store, "review", "show", rid, "--json").stdout)["fields"]
    assert [(f["field"], f["effective"]) for f in after] == [
        (f["field"], f["effective"]) for f in before
    ]
    for args, code in (
        ([rid, "--revision", "7", "--reason", "x"], "LABRIG_UNKNOWN_REVISION"),
        ([rid, "--revision", "1", "--reason", "x"], "LABRIG_UNDO_REFUSED"),
        ([rid, "--revision", "1", "--reason", " "], "LABRIG_REASON_REQUIRED"),
    ):
        assert main(["--store", str(store), "review", "undo", *args]) == 2, code
        assert f"labrig: {code}: " in capsys.readouterr().err


def test_the_review_list_of_a_period(
    store: Path, template: tuple[Path, TemplateResults], capsys: pytest.CaptureFixture[str]
) -> None:
    _root, made = template
    every = {made.published_id, made.blocked_id}

    def listed(*args: str) -> set[str]:
        assert main(["--store", str(store), "review", "list", "--json", *args]) == 0
        return {r["result_id"] for r in json.loads(capsys.readouterr().out)}

    assert listed("--since", "1d") == every  # made today
    assert listed("--until", "2000-01-01") == set()
    assert listed("--since", "2000-01-01T00:00", "--until", "0d") == every
    assert main(["--store", str(store), "review", "list", "--until", "2000-01-01"]) == 0
    assert capsys.readouterr().out.strip() == "No result matches."
    assert main(["--store", str(store), "review", "list", "--until", "soon"]) == 2
    assert "--until takes a date" in capsys.readouterr().err


def test_review_list_sorts_and_filters_by_device_or_rig(
    store: Path, template: tuple[Path, TemplateResults]
) -> None:
    """``--sort status`` puts the blocked result first (``--descending``: last); ``--device``
    keeps its attempts' results; a device or rig the catalog does not know, or an order that is
    not a column, is refused with LABRIG_USAGE and nothing on stdout."""
    from tests.support.results import DEVICE as INFO

    ids, DEVICE = template[1], INFO.device_id

    def listed(*args: str) -> list[str]:
        done = labrig(store, "review", "list", "--json", *args)
        assert done.returncode == 0, done.stderr
        return [r["result_id"] for r in json.loads(done.stdout)]

    assert listed("--sort", "status") == [ids.blocked_id, ids.published_id]
    assert listed("--sort", "status", "--descending") == [ids.published_id, ids.blocked_id]
    assert sorted(listed("--device", DEVICE)) == sorted([ids.blocked_id, ids.published_id])
    assert listed("--device", DEVICE, "--status", "blocked") == [ids.blocked_id]
    text = labrig(store, "review", "list", "--sort", "subject", "--limit", "1").stdout
    assert "Results 1–1 of 2." in text
    for bad in (("--rig", "nowhere"), ("--device", "uvc:none"), ("--sort", "colour")):
        refused = labrig(store, "review", "list", *bad)
        assert refused.returncode == 2 and refused.stdout == "", (bad, refused)
        assert "LABRIG_USAGE" in refused.stderr or "invalid choice" in refused.stderr, refused
    said = labrig(store, "review", "list", "--rig", "nowhere").stderr
    assert "LABRIG_USAGE" in said and "no recording of the rig 'nowhere'" in said
