"""``labrig export`` and ``labrig sync`` as a lab runs them: real processes, real results,
the real sha256sum."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

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
    root = tmp_path_factory.mktemp("cli-archive") / "store"
    return root, make_results(root)


@pytest.fixture
def store(template: tuple[Path, TemplateResults], tmp_path: Path) -> Path:
    return copy_store(template[0], tmp_path / "store")


def test_export_then_check_with_sha256sum_and_labrig(
    store: Path, template: tuple[Path, TemplateResults], tmp_path: Path
) -> None:
    ids = template[1]
    done = labrig(
        store, "export", ids.published_id[:8], "--to", str(tmp_path / "out"), "--media", "--json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    bundle = Path(report["bundle"])
    assert [r["result_id"] for r in report["results"]] == [ids.published_id]
    checked = subprocess.run(
        ["sha256sum", "-c", "--strict", "SHA256SUMS"],
        cwd=bundle,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0 and checked.stdout.count(": OK") == report["files"] - 1
    verified = labrig(store, "export", "verify", str(bundle))
    assert verified.returncode == 0 and "Bundle intact" in verified.stdout

    metrics = next(bundle.rglob("metrics.csv"))
    metrics.write_bytes(metrics.read_bytes().replace(b"px", b"mm", 1))
    broken = labrig(store, "export", "verify", str(bundle), "--json")
    assert broken.returncode == 1
    assert [p["path"] for p in json.loads(broken.stdout)["problems"]] == [
        metrics.relative_to(bundle).as_posix()
    ]
    assert (
        subprocess.run(
            ["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"],
            cwd=bundle,
            capture_output=True,
            timeout=60,
        ).returncode
        == 1
    )


def test_export_formats_chosen_on_the_command_line(
    store: Path, template: tuple[Path, TemplateResults], tmp_path: Path
) -> None:
    ids = template[1]
    done = labrig(
        store, "export", ids.published_id, "--to", str(tmp_path / "out"), "--format", "nwb,csv"
    )
    assert done.returncode == 0, done.stderr
    assert "    csv: markers-tidy.csv" in done.stdout and "    nwb: result.nwb" in done.stdout
    bundle = next((tmp_path / "out").glob("labrig-export-*"))
    assert {p.name for p in bundle.rglob("*") if p.suffix in (".csv", ".nwb", ".c3d")} == {
        "markers-tidy.csv",
        "metrics.csv",
        "series.csv",
        "result.nwb",
    }  # no C3D: only the formats named
    plain = labrig(store, "export", ids.published_id, "--to", str(tmp_path / "o2"), "--json")
    assert json.loads(plain.stdout)["results"][0]["formats"].keys() == {"csv", "c3d"}


def test_export_refusals_name_the_problem_and_write_nothing(
    store: Path, template: tuple[Path, TemplateResults], tmp_path: Path
) -> None:
    ids, out = template[1], tmp_path / "out"
    cases = [
        ((ids.blocked_id, "--to", str(out)), "LABRIG_RESULT_NOT_PUBLISHED"),
        (("nope-nope", "--to", str(out)), "LABRIG_UNKNOWN_RESULT"),
        (("--all", ids.published_id, "--to", str(out)), "LABRIG_USAGE"),
        ((ids.published_id,), "LABRIG_USAGE"),
        (("verify", str(tmp_path)), "LABRIG_NOT_A_BUNDLE"),
        ((ids.published_id, "--to", str(out), "--format", "csv,fbx"), "LABRIG_UNKNOWN_FORMAT"),
        ((ids.published_id, "--to", str(out), "--age", "30 years"), "LABRIG_NWB_SUBJECT"),
        # the template's result is in px: no lengths for OpenSim
        (
            (ids.published_id, "--to", str(out), "--format", "trc"),
            "LABRIG_FORMAT_NEEDS_CALIBRATION",
        ),
    ]
    for args, code in cases:
        refused = labrig(store, "export", *args)
        assert refused.returncode == 2 and f"labrig: {code}: " in refused.stderr, (
            args,
            refused.stderr,
        )
    assert not out.exists()


def test_sync_configure_once_and_status(store: Path, tmp_path: Path) -> None:
    share = tmp_path / "share"
    share.mkdir()
    not_yet = labrig(store, "sync", "--once")
    assert not_yet.returncode == 2 and "LABRIG_SYNC_NOT_CONFIGURED" in not_yet.stderr
    configured = labrig(
        store, "sync", "configure", "--to", str(share), "--name", "archive", "--reason", "share"
    )
    assert configured.returncode == 0, configured.stderr
    synced = labrig(store, "sync", "--once", "--json")
    assert synced.returncode == 0, synced.stderr
    batch = json.loads(synced.stdout)
    assert len(batch["acknowledged"]) == 6 and batch["audit_chain_head"]["seq"] == 1
    status = json.loads(labrig(store, "sync", "status", "--json").stdout)
    assert (status["acknowledged"], status["pending"], status["destination"]["name"]) == (
        6,
        0,
        "archive",
    )
    names = [
        json.loads(line)["name"] for line in labrig(store, "events", "--json").stdout.splitlines()
    ]
    assert names.count("sync.object.acknowledged") == 6

    revised = labrig(
        store,
        "review",
        "revise",
        _published(store),
        "--set",
        "track:0.extent=5",
        "--reason",
        "ruler",
    )
    assert revised.returncode == 0, revised.stderr
    shutil.move(share, tmp_path / "unmounted")
    failed = labrig(store, "sync", "--once")
    assert failed.returncode == 1 and "is not available" in failed.stdout and not share.exists()
    text = labrig(store, "sync", "status").stdout
    assert "pending 1" in text and "Last error" in text
    shutil.move(tmp_path / "unmounted", share)
    assert labrig(store, "sync", "--once").returncode == 0


def _published(store: Path) -> str:
    results = json.loads(labrig(store, "review", "list", "--json").stdout)
    return next(r["result_id"] for r in results if r["status"] == "published")


def test_sync_keeps_running_until_interrupted(store: Path, tmp_path: Path) -> None:
    share = tmp_path / "share"
    share.mkdir()
    assert (
        labrig(store, "sync", "configure", "--to", str(share), "--reason", "share").returncode == 0
    )
    env = os.environ | {"QT_QPA_PLATFORM": "offscreen", "LOGNAME": "ada"}
    child = subprocess.Popen(
        [sys.executable, "-m", "labrig", "--store", str(store), "sync", "--json", "--poll", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    errors: list[str] = []
    threading.Thread(
        target=lambda: [lines.put(line) for line in child.stdout or []], daemon=True
    ).start()
    reading_errors = threading.Thread(target=lambda: errors.extend(child.stderr or []))
    reading_errors.start()
    try:
        first = json.loads(lines.get(timeout=60))
        assert len(first["acknowledged"]) == 6
        revised = labrig(
            store,
            "review",
            "revise",
            _published(store),
            "--set",
            "track:0.extent=5",
            "--reason",
            "x",
        )
        assert revised.returncode == 0, revised.stderr
        second = json.loads(lines.get(timeout=60))  # the new result manifest, picked up by polling
        assert len(second["acknowledged"]) == 1
    finally:
        child.send_signal(signal.SIGINT)
        child.wait(timeout=30)
        reading_errors.join(timeout=30)
    assert child.returncode == 130
    assert "Traceback" not in "".join(errors)  # a clean stop after the batch, not an interrupt
