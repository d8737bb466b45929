"""Two workstations on one PostgreSQL catalog: a headless worker elsewhere runs the jobs,
this window sees it.

The worker is a real ``labrig worker`` process with its own connections; the only path
from it to this window is the outbox in the shared database, read by this window's
dispatcher thread and re-emitted by the bridge.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services, bootstrap
from labrig.domain.jobs import JobState
from labrig.store import Store
from labrig.ui.app import Gui, build_main_window

pytestmark = pytest.mark.postgresql
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def shared(pg_store: Store) -> Iterator[tuple[Services, Gui]]:
    services = bootstrap(store=pg_store, poll_seconds=0.05)
    gui = build_main_window(services)
    yield services, gui
    gui.window.shut_down()
    gui.executor.shutdown(5000)
    gui.bridge.detach(services)
    services.dispatcher_thread.stop()


def test_a_worker_on_another_machine_runs_the_jobs_and_this_window_shows_them_done(
    qtbot: QtBot, shared: tuple[Services, Gui], tmp_path: Path
) -> None:
    services, gui = shared
    qtbot.addWidget(gui.window)
    services.start()  # this window's dispatcher thread polls the shared outbox
    jobs = [
        services.queue.enqueue("labrig.selftest", [f"input-{i}"], {"steps": 0}).id for i in range(5)
    ]
    qtbot.waitUntil(lambda: gui.monitor.counts.get(JobState.READY) == 5, timeout=10_000)
    assert gui.window.queue_status.text().startswith("Queue: 5 ready")
    gui.monitor.follow_jobs()  # as the Capture screen does, for its attempts' analysis

    url = services.store.engine.url.render_as_string(hide_password=False)
    env = {**os.environ, "LABRIG_DB": url, "LABRIG_STORE": str(tmp_path / "shared-media")}
    worker = subprocess.run(
        [sys.executable, "-m", "labrig", "worker", "--drain", "--workers", "2"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert worker.returncode == 0, worker.stderr
    assert "5 jobs finished" in worker.stdout

    # nothing in this process ran them: their completion reaches the window through the outbox alone
    def done() -> set[str]:
        return {j.id for j in gui.monitor.jobs if j.state is JobState.SUCCEEDED}

    qtbot.waitUntil(lambda: done() == set(jobs), timeout=10_000)
    assert gui.window.queue_status.text().startswith("Queue: 0 ready · 0 running")
    assert gui.window.last_event.text() == "Last event: analysis.stage.completed"
