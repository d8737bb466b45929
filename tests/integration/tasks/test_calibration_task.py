"""Board calibration as a task: its progress climbs to the end, and a cancel stores nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import func, select

from labrig.bootstrap import Services, bootstrap
from labrig.calibration import CaptureChoice
from labrig.capture import Mode
from labrig.store import Store
from labrig.store.models import CalibrationRecord, OutboxEvent
from labrig.tasks import TaskCancelledError, TaskControl
from tests.support.analysis_runs import BOARD, record_board

SMALL = Mode(640, 360, 30.0)


@pytest.fixture
def services(store: Store) -> Iterator[Services]:
    built = bootstrap(store=store)
    yield built
    built.close()


def _recordings(services: Services) -> tuple[CaptureChoice, CaptureChoice]:
    board = record_board(services, SMALL, frames=20)
    plane = record_board(services, SMALL, scene="plane", frames=2)
    offered = {c.capture_id: c for c in services.calibration.recordings()}
    return offered[board], offered[plane]


def _stored(store: Store) -> tuple[int, int]:
    with store.read() as session:
        return (
            session.scalar(select(func.count()).select_from(CalibrationRecord)) or 0,
            session.scalar(select(func.count()).select_from(OutboxEvent)) or 0,
        )


def test_a_calibration_reports_its_progress_to_the_end(services: Services) -> None:
    board, plane = _recordings(services)
    seen: list[tuple[float, str]] = []
    outcome = services.calibration.calibrate(
        BOARD, board, plane, every=1, task=TaskControl(lambda f, m: seen.append((f, m)))
    )
    fractions = [f for f, _ in seen]
    assert outcome.result.valid and outcome.plane
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert len(seen) > 20  # one report per view at least, not a jump from 0 to 1
    assert any(m.startswith("finding the board: view 20 of about 20") for _, m in seen)
    assert any(m.startswith("solving the calibration") for _, m in seen)


@pytest.mark.parametrize("when", ["finding the board: view 5 of", "solving the calibration"])
def test_a_cancelled_calibration_stores_nothing(services: Services, when: str) -> None:
    board, plane = _recordings(services)
    before = _stored(services.store)
    task: TaskControl
    after_cancel: list[str] = []

    def cancel_at(_fraction: float, message: str) -> None:
        if task.cancelled:
            after_cancel.append(message)
        elif message.startswith(when):
            task.cancel()

    task = TaskControl(cancel_at)
    with pytest.raises(TaskCancelledError) as stopped:
        services.calibration.calibrate(BOARD, board, plane, every=1, task=task)
    assert stopped.value.code == "LABRIG_CANCELLED"
    assert len(after_cancel) <= 1, after_cancel  # it stopped at its next check, not at the end
    assert _stored(services.store) == before  # no calibration, no calibration.validated event
