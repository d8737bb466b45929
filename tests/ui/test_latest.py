"""Newest-wins background reads: a burst of requests costs at most two calls, and only the
newest is delivered."""

from __future__ import annotations

import threading

from pytestqt.qtbot import QtBot

from labrig.ui.shell.background import BackgroundCalls
from labrig.ui.shell.latest import Latest


def test_a_burst_of_requests_runs_twice_and_delivers_only_the_newest(qtbot: QtBot) -> None:
    calls = BackgroundCalls(threads=2)
    latest = Latest(calls)
    release = threading.Event()
    ran: list[int] = []
    delivered: list[int] = []

    def read(n: int) -> int:
        if n == 0:
            release.wait(5)  # the first read is slow: every later request arrives while it runs
        ran.append(n)
        return n

    for n in range(5):
        latest.request(lambda n=n: read(n), delivered.append, lambda error: delivered.append(-1))
    assert latest.busy
    release.set()

    qtbot.waitUntil(lambda: not latest.busy, timeout=5000)
    assert ran == [0, 4] and delivered == [4]
    assert calls.wait(1000)


def test_a_failure_is_delivered_to_its_own_callback(qtbot: QtBot) -> None:
    latest = Latest(BackgroundCalls())
    errors: list[Exception] = []

    def broken() -> None:
        raise ValueError("disk gone")

    latest.request(broken, lambda _: None, errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    assert str(errors[0]) == "disk gone" and not latest.busy
