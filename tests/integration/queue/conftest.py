"""Queue test parts: a controllable clock shared by several simulated workers, and test stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from labrig.errors import PermanentStageError, QualityBlockedError, TransientStageError
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.lease import Clock, LeaseTerms
from labrig.jobs.policy import RetryPolicy
from labrig.jobs.queue import JobQueue
from labrig.jobs.stages import Stage, StageContext, StageOutput, StageRegistry
from labrig.store import Store
from tests.conftest import BACKENDS, store_on


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Store:
    """Every queue test runs on SQLite and on PostgreSQL."""
    return store_on(request, request.param)


@dataclass
class Time:
    """One time line for every simulated worker of a test."""

    mono: float = 1000.0
    wall: datetime = field(default_factory=lambda: datetime(2026, 11, 29, 12, 0, tzinfo=UTC))

    def advance(self, seconds: float) -> None:
        self.mono += seconds
        self.wall += timedelta(seconds=seconds)


class FakeClock(Clock):
    def __init__(
        self, time: Time, nonce: str, host: str = "bench-1", boot_id: str = "boot-a"
    ) -> None:
        # the test drives time
        super().__init__(host=host, boot_id=boot_id, nonce=nonce, database_time=False)
        self.time = time

    def monotonic(self) -> float:
        return self.time.mono

    def now(self) -> datetime:
        return self.time.wall


def _echo(ctx: StageContext) -> StageOutput:
    return StageOutput(
        {"inputs": ctx.input_digests, "config": ctx.config, "upstream": dict(ctx.upstream)}
    )


def _fails(ctx: StageContext) -> StageOutput:
    kind = ctx.config["fail"]
    if kind == "transient":
        raise TransientStageError("camera busy")
    if kind == "quality":
        raise QualityBlockedError(["markers found in 3% of frames (need 60%)"])
    if kind == "crash":
        raise ZeroDivisionError("division by zero")
    raise PermanentStageError("media undecodable", code="LABRIG_MEDIA_UNDECODABLE")


def _degraded(ctx: StageContext) -> StageOutput:
    return StageOutput({"px": 1}, degraded_reasons=("no valid calibration: results in pixels",))


STAGES = (
    Stage("t.echo", 1, True, _echo, max_attempts=3),
    Stage("t.fail", 1, True, _fails, max_attempts=3),
    Stage("t.degraded", 1, True, _degraded),
    Stage("t.loose", 1, False, _echo),
)


@dataclass
class Rig:
    store: Store
    time: Time
    queue: JobQueue
    writes: FencedWrites

    def worker(self, nonce: str, **clock: str) -> tuple[JobQueue, FencedWrites]:
        """Another worker on the same store and time line."""
        q = JobQueue(
            self.store,
            self.queue.registry,
            FakeClock(self.time, nonce, **clock),
            self.queue.terms,
            self.queue.retry,
        )
        return q, FencedWrites(q)


@pytest.fixture
def rig(store: Store) -> Rig:
    time = Time()
    queue = JobQueue(
        store,
        StageRegistry(STAGES),
        FakeClock(time, "w1"),
        LeaseTerms(30.0),
        RetryPolicy(base_seconds=2.0, cap_seconds=60.0),
    )
    return Rig(store, time, queue, FencedWrites(queue))
