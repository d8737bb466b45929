"""The ``labrig`` command as a user runs it: a real process on a real store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from labrig import __version__
from labrig.events import record_event
from labrig.store import open_store, paths

REPO = Path(__file__).resolve().parents[2]


def labrig(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-m", "labrig", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO,
    )


def test_version() -> None:
    result = labrig("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"labrig {__version__}"


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "labrig"
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("labrig ")


def test_events_catalog_lists_the_sixteen(tmp_path: Path) -> None:
    result = labrig("--store", str(tmp_path), "events", "--catalog", "--json")
    assert result.returncode == 0, result.stderr
    catalog = json.loads(result.stdout)
    assert len(catalog) == 16
    assert catalog[0]["name"] == "capture.device.connected"
    assert catalog[15]["name"] == "storage.pressure.changed"
    assert all(e["delivery"] == "AtLeastOnceWithIdempotentConsumer" for e in catalog)
    text = labrig("events", "--catalog").stdout
    assert "EVT-07  analysis.stage.completed" in text


def test_events_lists_recorded_events_in_order_and_flags_uncatalogued(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with store.write() as session:
        record_event(
            session,
            "storage.pressure.changed",
            {
                "volume": "/data",
                "previous_level": "normal",
                "level": "high",
                "free_bytes": 10,
                "minutes_left": 3.5,
            },
        )
        record_event(session, "plugin.custom", {"x": 1})
    store.close()
    lines = labrig("--store", str(tmp_path), "events", "--json").stdout.splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["name"] for e in events] == ["storage.pressure.changed", "plugin.custom"]
    assert [e["known"] for e in events] == [True, False]
    assert events[0]["seq"] < events[1]["seq"]
    text = labrig("--store", str(tmp_path), "events").stdout
    assert "plugin.custom  [uncatalogued]" in text
    assert "storage.pressure.changed  {" in text


def test_events_follow_prints_events_as_they_are_committed(tmp_path: Path) -> None:
    open_store(tmp_path).close()
    env = os.environ | {"QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "labrig",
            "--store",
            str(tmp_path),
            "events",
            "--follow",
            "--json",
            "--poll",
            "0.05",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        store = open_store(tmp_path)
        with store.write() as session:
            record_event(session, "plugin.before", {"n": 0})
        assert json.loads(proc.stdout.readline())["name"] == "plugin.before"  # it is following now
        with store.write() as session:
            record_event(session, "plugin.later", {"n": 1})
        store.close()
        line = proc.stdout.readline()
        assert json.loads(line)["name"] == "plugin.later"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_doctor_passes_on_a_healthy_store(tmp_path: Path) -> None:
    result = labrig("--store", str(tmp_path / "s"), "doctor", "--json")
    report = json.loads(result.stdout)
    by_name = {c["name"]: c for c in report["checks"]}
    assert set(by_name) == {"qt", "opencv", "store", "database", "pages", "space"}
    for name in ("qt", "opencv", "store", "database", "pages"):
        assert by_name[name]["status"] == "ok", by_name[name]
    assert "offscreen" in by_name["qt"]["detail"]
    assert "MJPG" in by_name["opencv"]["detail"]
    # free space depends on this machine; the exit code must agree with the report either way
    assert result.returncode == (0 if report["ok"] else 1)
    assert report["ok"] == (by_name["space"]["status"] != "fail")


def test_doctor_fails_readably_on_a_corrupt_database(tmp_path: Path) -> None:
    (tmp_path / paths.DB_FILENAME).write_bytes(b"garbage" * 1000)
    result = labrig("--store", str(tmp_path), "doctor")
    assert result.returncode == 1
    assert "LABRIG_DB_CORRUPT" in result.stdout
    assert "Problems found" in result.stdout


def test_doctor_fails_readably_on_an_unwritable_store(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = labrig("--store", str(tmp_path / "file" / "s"), "doctor", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False
    [store_check] = [c for c in report["checks"] if c["name"] == "store"]
    assert "LABRIG_STORE_UNWRITABLE" in store_check["detail"]


def test_doctor_fails_when_qt_cannot_start_its_platform_plugin(tmp_path: Path) -> None:
    env = os.environ | {"QT_QPA_PLATFORM": "no-such-platform"}
    result = subprocess.run(
        [sys.executable, "-m", "labrig", "--store", str(tmp_path), "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
    )
    assert result.returncode == 1
    [qt] = [c for c in json.loads(result.stdout)["checks"] if c["name"] == "qt"]
    assert qt["status"] == "fail" and "platform plugin" in qt["detail"]
    assert qt["fix"]


@pytest.mark.parametrize("args", [("events",), ("events", "--json")])
def test_commands_refuse_a_foreign_database_with_code_and_exit_2(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    import sqlite3

    with sqlite3.connect(tmp_path / paths.DB_FILENAME) as conn:
        conn.execute("CREATE TABLE photos (id INTEGER)")
    result = labrig("--store", str(tmp_path), *args)
    assert result.returncode == 2
    assert "labrig: LABRIG_DB_FOREIGN:" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_command_is_a_usage_error() -> None:
    result = labrig("fly")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
