"""The task protocol: progress kept and observed, a cancel seen at the next check, a share
of a longer task."""

from __future__ import annotations

import threading

import pytest

from labrig.errors import JobCancelledError
from labrig.tasks import UNTRACKED, Share, Task, TaskCancelledError, TaskControl


def test_a_control_keeps_and_forwards_progress_clamped_to_the_unit_range() -> None:
    seen: list[tuple[float, str]] = []
    task = TaskControl(lambda f, m: seen.append((f, m)))
    task.progress(0.25, "a quarter")
    task.progress(1.5, "past the end")
    task.progress(-1.0)
    assert seen == [(0.25, "a quarter"), (1.0, "past the end"), (0.0, "")]
    assert (task.fraction, task.message) == (0.0, "")


def test_a_cancel_from_another_thread_is_seen_at_the_next_check() -> None:
    task = TaskControl()
    task.check_cancelled()  # nothing requested: returns
    assert not task.cancelled
    canceller = threading.Thread(target=task.cancel)
    canceller.start()
    canceller.join()
    assert task.cancelled
    with pytest.raises(TaskCancelledError) as stopped:
        task.check_cancelled()
    # a JobCancelledError, so work run in a job's stage that lets it through is recorded Cancelled
    assert isinstance(stopped.value, JobCancelledError) and stopped.value.code == "LABRIG_CANCELLED"


def test_a_share_maps_its_progress_into_its_range_and_passes_the_cancel_through() -> None:
    seen: list[tuple[float, str]] = []
    parent = TaskControl(lambda f, m: seen.append((f, m)))
    share: Task = Share(parent, 0.5, 0.75, "copying")
    share.progress(0.0)
    share.progress(0.5, "half")
    share.progress(2.0)
    assert seen == [(0.5, "copying"), (0.625, "half"), (0.75, "copying")]
    parent.cancel()
    assert share.cancelled
    with pytest.raises(TaskCancelledError):
        share.check_cancelled()


def test_untracked_work_is_never_cancelled() -> None:
    UNTRACKED.progress(0.5, "nobody watches")
    UNTRACKED.check_cancelled()
    assert not UNTRACKED.cancelled
