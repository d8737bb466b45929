"""The one Qt adapter for long work: a task's progress from a working thread reaches the GUI thread,
paced, and the last value is never lost; a cancel from the window reaches the work."""

from __future__ import annotations

import threading

import pytest
from pytestqt.qtbot import QtBot

from labrig.tasks import TaskCancelledError
from labrig.ui.shell.tasks import QtTask

UPDATES = 2000


def test_progress_from_a_working_thread_arrives_paced_on_the_gui_thread_and_the_last_is_kept(
    qtbot: QtBot,
) -> None:
    task = QtTask(interval=0.05)
    seen: list[tuple[float, str, str]] = []
    task.progressed.connect(lambda f, m: seen.append((f, m, threading.current_thread().name)))

    def work() -> None:
        for i in range(1, UPDATES + 1):
            task.progress(i / UPDATES, f"step {i}")

    worker = threading.Thread(target=work, name="worker")
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    task.finish()  # the work ended: its last value is delivered now if the pacing held it back
    assert seen[-1][:2] == (1.0, f"step {UPDATES}")
    assert len(seen) < UPDATES / 10  # paced: a few, not thousands
    assert [f for f, _, _ in seen] == sorted(f for f, _, _ in seen)
    assert {name for _, _, name in seen} == {threading.main_thread().name}


def test_a_cancel_from_the_window_is_seen_by_the_work_at_its_next_check(qtbot: QtBot) -> None:
    task = QtTask()
    started, outcome = threading.Event(), list[BaseException]()

    def work() -> None:
        started.set()
        try:
            while True:
                task.check_cancelled()
        except TaskCancelledError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    assert started.wait(10)
    assert not task.cancelled
    task.cancel()
    worker.join(10)
    assert not worker.is_alive() and outcome and outcome[0].code == "LABRIG_CANCELLED"
    with pytest.raises(TaskCancelledError):
        task.check_cancelled()
