"""Export, sync and verify as tasks: each reports its progress to the end, and a cancel leaves
nothing half-done."""

from __future__ import annotations

from pathlib import Path

import pytest

from labrig.capture import verify_store
from labrig.sync import FolderDestination, sync_status
from labrig.tasks import TaskCancelledError, TaskControl
from tests.integration.archive.conftest import Lab
from tests.integration.archive.test_sync import acks, assert_whole, configure


class Recorded(TaskControl):
    """Keeps every report; cancels itself at the first report whose message holds ``cancel_at``."""

    def __init__(self, cancel_at: str | None = None) -> None:
        super().__init__(self._on_progress)
        self.cancel_at, self.seen, self.after_cancel = (
            cancel_at,
            list[tuple[float, str]](),
            list[str](),
        )

    def _on_progress(self, fraction: float, message: str) -> None:
        if self.cancelled:
            self.after_cancel.append(message)
        self.seen.append((fraction, message))
        if self.cancel_at is not None and self.cancel_at in message:
            self.cancel()

    @property
    def fractions(self) -> list[float]:
        return [f for f, _ in self.seen]


def test_an_export_reports_its_progress_and_a_cancelled_one_leaves_no_bundle(
    lab: Lab, tmp_path: Path
) -> None:
    task = Recorded()
    report = lab.services.export.export([lab.published_id], tmp_path / "out", media=True, task=task)
    assert report.bundle.is_dir()
    assert task.fractions == sorted(task.fractions) and task.fractions[-1] == 1.0
    assert any(m.startswith("copying ") for _, m in task.seen)  # the media files count, one by one

    target = tmp_path / "cancelled"
    cancelling = Recorded(cancel_at="copying ")
    with pytest.raises(TaskCancelledError):
        lab.services.export.export([lab.published_id], target, media=True, task=cancelling)
    assert cancelling.after_cancel == []  # stopped at the next file
    assert list(target.iterdir()) == []  # the unfinished bundle is removed


def test_a_cancelled_sync_batch_keeps_what_was_confirmed_and_the_next_batch_finishes(
    lab: Lab, dest: Path
) -> None:
    sync = lab.services_as("ada", lambda c: FolderDestination(c, chunk=8192)).sync
    configure(lab, dest)
    task = Recorded(cancel_at="(3 of 6)")  # while copying the third object
    report = sync.run_once(task=task)
    assert report.error is not None and report.error.startswith("cancelled:")
    assert task.after_cancel == []  # not one more chunk was copied …
    # … so the third is whole only if it was then
    assert len(report.acknowledged) in (2, 3) and not report.failed
    assert {p["object_sha256"] for p in acks(lab)} == set(report.acknowledged)
    # the copy it stopped is gone, not left half-written
    assert not list((dest / "objects").rglob("*.part"))
    assert sync_status(lab.store).pending == 6 - len(report.acknowledged)

    finishing = Recorded()
    assert sync.run_once(task=finishing).error is None
    assert finishing.fractions == sorted(finishing.fractions) and finishing.fractions[-1] == 1.0
    assert_whole(lab, dest)


def test_verify_reports_each_file_and_stops_when_cancelled(lab: Lab) -> None:
    task = Recorded()
    report = verify_store(lab.store, task)
    assert not report.problems and report.blobs_checked > 2
    assert task.fractions == sorted(task.fractions) and task.fractions[-1] == 1.0
    assert sum(m.startswith("re-hashing file") for _, m in task.seen) == report.blobs_checked

    with pytest.raises(TaskCancelledError):
        verify_store(lab.store, Recorded(cancel_at="re-hashing file 2 of"))
