"""The QThreadPool executor runs real jobs from the real store, reports on the GUI thread, and
never blocks it."""

from __future__ import annotations

import itertools
import time

from PySide6.QtCore import QThread, QTimer
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services, bootstrap, default_registry
from labrig.domain.jobs import JobState
from labrig.errors import PermanentStageError
from labrig.jobs.queue import WORKER_STOPPED
from labrig.jobs.stages import Stage, StageContext, StageOutput
from labrig.jobs.views import JobView
from labrig.store import Store
from labrig.store.models import Job
from labrig.ui.app import Gui, build_main_window
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.qt_executor import QtJobExecutor
from tests.ui.jobs_helpers import (
    ERROR_COLUMN,
    LONG,
    SELFTEST,
    SHORT,
    TEST_LEASE,
    WAIT_MS,
    queue_page,
    state_shown,
)

S = JobState


def test_jobs_run_on_the_pool_and_the_queue_page_shows_them_succeeded(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    finished: list[JobView] = []
    ui.executor.signals.jobFinished.connect(finished.append)
    services.start()
    ui.executor.start()

    with qtbot.waitSignal(ui.executor.signals.jobFinished, timeout=WAIT_MS):
        jobs = [services.queue.enqueue(SELFTEST, [f"{i:064x}"], SHORT) for i in range(3)]
    qtbot.waitUntil(lambda: len(finished) == 3, timeout=WAIT_MS)

    assert sorted(v.id for v in finished) == sorted(j.id for j in jobs)
    assert {v.state for v in finished} == {S.SUCCEEDED}
    page = queue_page(ui)
    qtbot.waitUntil(lambda: all(state_shown(page, j.id) == "Done" for j in jobs), timeout=WAIT_MS)
    assert ui.executor.running_jobs == frozenset()
    status = ui.window.findChild(QLabel, "queueStatus")
    qtbot.waitUntil(
        lambda: status.text() == "Queue: 0 ready · 0 running · 0 failed", timeout=WAIT_MS
    )
    assert status.toolTip().startswith("No job is waiting, running, blocked or failed")


def test_a_requested_stage_is_claimed_at_once_not_at_the_fallback_timer(
    qtbot: QtBot, services: Services
) -> None:
    bridge = EventBridge()
    bridge.attach(services)
    # the timer never fires here
    executor = QtJobExecutor(services.queue, workers=1, fallback_ms=600_000)
    executor.attach(bridge)
    services.start()
    executor.start()  # nothing to claim yet
    try:
        with qtbot.waitSignal(executor.signals.jobFinished, timeout=WAIT_MS) as done:
            job = services.queue.enqueue(SELFTEST, config=SHORT)
        assert done.args[0].id == job.id and done.args[0].state is S.SUCCEEDED
    finally:
        executor.shutdown(5000)
        bridge.detach(services)


def test_progress_arrives_on_the_gui_thread_throttled_and_ending_at_one(
    qtbot: QtBot, qapp: QApplication, services: Services, ui: Gui
) -> None:
    seen: list[tuple[str, float, str, float, bool]] = []
    order: list[str] = []
    ui.executor.signals.jobProgressed.connect(
        lambda job_id, fraction, message: seen.append(
            (job_id, fraction, message, time.monotonic(), QThread.currentThread() == qapp.thread())
        )
    )
    ui.executor.signals.jobProgressed.connect(lambda *_: order.append("progress"))
    ui.executor.signals.jobFinished.connect(lambda _view: order.append("finished"))
    job = services.queue.enqueue(SELFTEST, config={"steps": 50, "step_seconds": 0.004})

    with qtbot.waitSignal(ui.executor.signals.jobFinished, timeout=WAIT_MS):
        ui.executor.start()

    assert 1 <= len(seen) < 15, f"50 reports should reach the GUI as a few, not {len(seen)}"
    assert all(job_id == job.id for job_id, *_ in seen)
    assert all(on_gui for *_, on_gui in seen)
    fractions = [fraction for _, fraction, *_ in seen]
    assert fractions == sorted(fractions)
    assert seen[-1][1:3] == (1.0, "step 50 of 50")
    gaps = [b[3] - a[3] for a, b in itertools.pairwise(seen[:-1])]  # the last one may come early
    assert all(gap >= 0.09 for gap in gaps), gaps
    assert order[-1] == "finished" and order[-2] == "progress"


def test_a_permanent_failure_is_reported_with_its_code(qtbot: QtBot, store: Store) -> None:
    def broken(ctx: StageContext) -> StageOutput:
        raise PermanentStageError("the input is not a video file", code="LABRIG_TEST_NOT_VIDEO")

    registry = default_registry(store)
    registry.register(Stage("test.broken", 1, True, broken, max_attempts=1))
    services = bootstrap(store=store, poll_seconds=0.05, registry=registry, lease=TEST_LEASE)
    gui = build_main_window(services)
    qtbot.addWidget(gui.window)
    try:
        services.start()
        job = services.queue.enqueue("test.broken")
        with qtbot.waitSignal(gui.executor.signals.jobFailed, timeout=WAIT_MS) as failed:
            gui.executor.start()
        assert failed.args == [job.id, "LABRIG_TEST_NOT_VIDEO", "the input is not a video file"]
        status = gui.window.findChild(QLabel, "queueStatus")
        qtbot.waitUntil(
            lambda: status.text() == "Queue: 0 ready · 0 running · 1 failed", timeout=WAIT_MS
        )
        page = queue_page(gui)
        row = page.model.row_of(job.id)
        assert (
            row is not None
            and page.model.index(row, ERROR_COLUMN).data() == "LABRIG_TEST_NOT_VIDEO"
        )
    finally:
        gui.executor.shutdown(5000)
        gui.bridge.detach(services)
        services.close()


def test_a_lost_lease_is_reported_and_the_result_discarded(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    job = services.queue.enqueue(SELFTEST, config=LONG)
    with qtbot.waitSignal(ui.executor.signals.jobStarted, timeout=WAIT_MS):
        ui.executor.start()
    qtbot.waitUntil(lambda: services.queue.get(job.id).state is S.RUNNING, timeout=WAIT_MS)
    finished: list[JobView] = []
    ui.executor.signals.jobFinished.connect(finished.append)

    with services.store.write() as session:  # another worker took the job over
        row = session.get(Job, job.id)
        assert row is not None
        row.fencing_token += 1
        row.owner = "elsewhere:1:takeover"
    with qtbot.waitSignal(ui.executor.signals.jobFailed, timeout=WAIT_MS) as failed:
        pass  # the worker notices at its next renewal (a third of the 3 s lease)

    assert failed.args[:2] == [job.id, "LABRIG_LEASE_LOST"]
    assert finished == []
    assert ui.executor.running_jobs == frozenset()


def test_shutdown_waits_for_the_worker_and_the_job_is_handed_back_uncharged(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    job = services.queue.enqueue(SELFTEST, config=LONG)
    with qtbot.waitSignal(ui.executor.signals.jobStarted, timeout=WAIT_MS):
        ui.executor.start()
    qtbot.waitUntil(lambda: services.queue.get(job.id).state is S.RUNNING, timeout=WAIT_MS)
    assert services.queue.get(job.id).attempts == 1
    finished: list[JobView] = []
    ui.executor.signals.jobFinished.connect(finished.append)

    with qtbot.assertNotEmitted(ui.executor.signals.jobFailed):  # handed back is no failure
        assert ui.executor.shutdown(5000) is True

    view = services.queue.get(job.id)
    assert (view.state, view.error_code, view.attempts) == (S.RETRY_WAITING, WORKER_STOPPED, 0)
    assert [v.state for v in finished] == [S.RETRY_WAITING]  # reported before shutdown returned
    assert ui.executor.running_jobs == frozenset()
    ui.executor.start()
    ui.executor.poke()
    assert services.queue.get(job.id).state is S.RETRY_WAITING  # a stopped executor claims nothing


def test_the_gui_thread_serves_events_while_stages_sleep(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    jobs = [
        services.queue.enqueue(SELFTEST, [f"{i:064x}"], {"steps": 40, "step_seconds": 0.05})
        for i in range(2)
    ]
    with qtbot.waitSignal(ui.executor.signals.jobStarted, timeout=WAIT_MS):
        ui.executor.start()
    qtbot.waitUntil(lambda: services.queue.get(jobs[0].id).state is S.RUNNING, timeout=WAIT_MS)
    ticks: list[float] = []
    ticker = QTimer()
    ticker.setInterval(20)
    ticker.timeout.connect(lambda: ticks.append(time.monotonic()))
    fired: dict[str, object] = {}

    def on_time() -> None:
        fired["after"] = time.monotonic() - asked
        fired["states"] = {services.queue.get(j.id).state for j in jobs}

    ticker.start()
    asked = time.monotonic()
    QTimer.singleShot(100, on_time)
    qtbot.waitUntil(lambda: "after" in fired, timeout=2000)
    qtbot.wait(400)
    ticker.stop()

    assert 0.09 <= float(fired["after"]) < 0.5  # type: ignore[arg-type]
    assert fired["states"] == {S.RUNNING}  # both stages were sleeping on their workers meanwhile
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert len(ticks) >= 10 and max(gaps) < 0.25, gaps
