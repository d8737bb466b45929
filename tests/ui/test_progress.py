"""Progress coalescing: the newest value wins, at most one delivery per interval, the
last never lost."""

from __future__ import annotations

import threading

from labrig.tasks import Progress, ProgressCell, ProgressThrottle


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _p(fraction: float) -> Progress:
    return Progress(fraction, f"{fraction:.0%}")


def test_first_value_goes_at_once_later_ones_wait_for_the_interval() -> None:
    clock = _Clock()
    throttle = ProgressThrottle(0.25, clock)  # binary fractions: the arithmetic below is exact

    assert throttle.offer("a", _p(0.1)) == _p(0.1)
    clock.now += 0.125
    assert throttle.offer("a", _p(0.2)) is None
    assert throttle.offer("a", _p(0.3)) is None  # replaces 0.2, which is dropped
    assert throttle.wait() == 0.125
    assert throttle.due() == []

    clock.now += 0.125
    assert throttle.due() == [("a", _p(0.3))]
    assert throttle.wait() is None


def test_jobs_are_throttled_independently() -> None:
    clock = _Clock()
    throttle = ProgressThrottle(0.1, clock)

    assert throttle.offer("a", _p(0.1)) is not None
    assert throttle.offer("b", _p(0.5)) is not None
    assert throttle.offer("a", _p(0.2)) is None


def test_finish_hands_back_the_waiting_value_and_forgets_the_job() -> None:
    clock = _Clock()
    throttle = ProgressThrottle(0.1, clock)
    throttle.offer("a", _p(0.5))
    throttle.offer("a", _p(1.0))

    assert throttle.finish("a") == _p(1.0)
    assert throttle.finish("a") is None
    assert throttle.wait() is None
    assert throttle.offer("a", _p(0.1)) == _p(0.1)  # a new run of the same job starts fresh


def test_a_cell_asks_to_be_taken_only_when_it_was_empty() -> None:
    cell = ProgressCell()

    assert cell.put(0.1, "a") is True
    assert cell.put(0.2, "b") is False
    assert cell.take() == Progress(0.2, "b")
    assert cell.take() is None
    assert cell.put(0.3, "c") is True


def test_a_cell_keeps_the_newest_value_across_threads() -> None:
    cell = ProgressCell()
    notices: list[bool] = []

    def put_many() -> None:
        for i in range(1, 1001):
            notices.append(cell.put(i / 1000, str(i)))

    worker = threading.Thread(target=put_many)
    worker.start()
    worker.join(10)

    assert cell.take() == Progress(1.0, "1000")
    assert notices.count(True) == 1
