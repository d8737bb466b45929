"""``labrig worker --processes N``: one command, N worker processes forked after its start-up,
as a lab runs it as one service."""

from __future__ import annotations

import os
import queue
import re
import signal
from pathlib import Path

import pytest
from sqlalchemy import func, select

from labrig.bootstrap import bootstrap
from labrig.store import open_store
from labrig.store.models import Job
from tests.conftest import BACKENDS
from tests.support.cli import lines_of, read_until, worker

STARTED = re.compile(r"^Worker (\d) of 2 started \(process (\d+)\)")


@pytest.fixture(params=BACKENDS)
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The environment of a command on a new catalog: SQLite in the data folder, or a database of
    its own on the tests' PostgreSQL cluster."""
    env = {"LABRIG_STORE": str(tmp_path / "store"), "QT_QPA_PLATFORM": "offscreen"}
    if request.param == "postgresql":
        env["LABRIG_DB"] = request.getfixturevalue("postgres").url()
    return env


def _enqueue(env: dict[str, str], jobs: int) -> None:
    services = bootstrap(store=open_store(env["LABRIG_STORE"], db=env.get("LABRIG_DB")))
    try:
        for i in range(jobs):
            services.queue.enqueue("labrig.selftest", [f"{i:064x}"], {"steps": 0})
    finally:
        services.close()


def _states(env: dict[str, str]) -> dict[str, int]:
    store = open_store(env["LABRIG_STORE"], db=env.get("LABRIG_DB"))
    try:
        with store.read() as session:
            rows = session.execute(select(Job.state, func.count()).group_by(Job.state))
            return {state: count for state, count in rows}
    finally:
        store.close()


def _both_started(lines: queue.Queue[str]) -> dict[int, int]:
    """Read until both processes said they started: their process ids by number."""
    said = read_until(lines, "started (process", 2)
    return {int(m[1]): int(m[2]) for line in said if (m := STARTED.match(line))}


def test_a_worker_of_two_processes_drains_the_queue_each_saying_what_it_ran(
    catalog: dict[str, str],
) -> None:
    _enqueue(catalog, 40)
    child = worker(catalog, "--drain", "--processes", "2")
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    started = {
        int(m[1]): int(m[2])
        for m in re.finditer(r"Worker (\d) of 2 started \(process (\d+)\)", out)
    }
    assert sorted(started) == [1, 2] and len(set(started.values())) == 2, out
    assert child.pid not in started.values()  # forked: the command's process only waits
    ran = {
        int(m[1]): int(m[2])
        for m in re.finditer(r"Worker (\d) of 2 stopped: (\d+) jobs finished", out)
    }
    assert sorted(ran) == [1, 2] and sum(ran.values()) == 40, out
    assert _states(catalog) == {"Succeeded": 40}


def test_stopping_the_command_stops_each_of_its_processes_cleanly(
    catalog: dict[str, str],
) -> None:
    child = worker(catalog, "--processes", "2")
    lines, errors = lines_of(child.stdout), lines_of(child.stderr)
    try:
        _both_started(lines)
    finally:
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=120)
    assert child.returncode == 0
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    assert sum("of 2 stopped: 0 jobs finished" in line for line in rest) == 2, rest
    assert "Traceback" not in "".join(errors.queue)


def test_a_process_that_dies_has_the_others_stopped_and_the_command_fails(tmp_path: Path) -> None:
    """A service manager restarts the pool whole rather than leave it a process short."""
    env = {"LABRIG_STORE": str(tmp_path / "store")}
    child = worker(env, "--processes", "2")
    lines, errors = lines_of(child.stdout), lines_of(child.stderr)
    try:
        started = _both_started(lines)
        os.kill(started[2], signal.SIGKILL)
        child.wait(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 128 + signal.SIGKILL
    said = "".join(errors.queue)
    assert "worker process 2 of 2 ended with code 137; stopping the others" in said, said
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    assert any("Worker 1 of 2 stopped: 0 jobs finished" in line for line in rest), rest


def test_a_number_of_processes_below_one_is_refused(tmp_path: Path) -> None:
    child = worker({"LABRIG_STORE": str(tmp_path / "store")}, "--processes", "0")
    _out, err = child.communicate(timeout=120)
    assert child.returncode == 2
    assert "LABRIG_USAGE: --processes must be at least 1" in err
    assert not (tmp_path / "store").exists()  # refused before anything was opened
