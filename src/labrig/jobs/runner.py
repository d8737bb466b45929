"""Running one claimed job: start, call the stage, renew the lease, end it with a typed outcome.

Everything here runs on the worker's own thread. The lease is renewed from that
thread, at most every third of the lease, whenever the stage reports progress
or asks whether it was cancelled; a stage that does neither for a whole lease
loses the job, which is what should happen to a stuck stage.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from labrig.errors import (
    JobCancelledError,
    LeaseLostError,
    PermanentStageError,
    StageFailure,
    TransientStageError,
)
from labrig.jobs.completions import Outcome, RunResult, completion_event
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.isolation import run_isolated
from labrig.jobs.stages import StageRegistry, WorkerStoppingError
from labrig.jobs.views import Claim
from labrig.store.dialects import RawDialect
from labrig.tasks import BELOW_RECORDING, KeyedProgress, run_below_recording

__all__ = ["RunResult", "execute_claim", "run_claim"]

STAGE_CRASHED = "LABRIG_STAGE_CRASHED"
CANCEL_POLL_SECONDS = 1.0


class RunContext:
    """The :class:`~labrig.jobs.stages.StageContext` of one run."""

    def __init__(
        self,
        writes: FencedWrites,
        claim: Claim,
        upstream: dict[str, Mapping[str, Any]],
        on_progress: KeyedProgress | None,
        stopping: threading.Event,
    ) -> None:
        self.job_id, self.stage_id = claim.job_id, claim.stage_id
        self.input_digests, self.config, self.checkpoint = (
            claim.input_digests,
            claim.config,
            claim.checkpoint,
        )
        self.upstream = upstream
        self._writes, self._claim = writes, claim
        self._on_progress, self._stopping = on_progress, stopping
        self._renew_every = writes.queue.terms.renew_every
        self._last_renewal = self._last_cancel_poll = time.monotonic()
        self._cancel_requested = False
        self._fraction, self._message = 0.0, ""

    def _renew_if_due(self) -> None:
        if time.monotonic() - self._last_renewal >= self._renew_every:
            self._cancel_requested |= self._writes.renew(self._claim, self._fraction, self._message)
            self._last_renewal = self._last_cancel_poll = time.monotonic()

    def _poll_cancel_if_due(self) -> None:
        # a read, not a write: an operator's cancel is seen within a second, not a third of the
        # lease
        if time.monotonic() - self._last_cancel_poll >= CANCEL_POLL_SECONDS:
            self._cancel_requested |= self._writes.queue.cancel_requested(self.job_id)
            self._last_cancel_poll = time.monotonic()

    def progress(self, fraction: float, message: str = "") -> None:
        self._fraction, self._message = fraction, message
        if self._on_progress is not None:
            self._on_progress(self.job_id, fraction, message)
        self._renew_if_due()

    def save_checkpoint(self, state: Mapping[str, Any]) -> None:
        self._writes.checkpoint(self._claim, state)
        self.checkpoint = dict(state)
        self._last_renewal = time.monotonic()

    @property
    def cancelled(self) -> bool:
        self._renew_if_due()
        self._poll_cancel_if_due()
        return self._cancel_requested

    def check_cancelled(self) -> None:
        if self._stopping.is_set():
            raise WorkerStoppingError
        if self.cancelled:
            raise JobCancelledError("cancelled by an operator")


ANALYSIS_NICENESS = BELOW_RECORDING  # how far below recording analysis threads run (Linux)


def yield_to_recording() -> None:
    """A job thread's work runs below any recording of this process
    (:func:`labrig.tasks.run_below_recording`)."""
    run_below_recording()


def run_claim(
    writes: FencedWrites,
    registry: StageRegistry,
    claim: Claim,
    on_progress: KeyedProgress | None = None,
    stopping: threading.Event | None = None,
) -> RunResult:
    """Run ``claim`` to its end and write its outcome. Never raises for the stage's sake."""
    results, _ = writes.finish([execute_claim(writes, registry, claim, on_progress, stopping)])
    return results[0]


def execute_claim(
    writes: FencedWrites,
    registry: StageRegistry,
    claim: Claim,
    on_progress: KeyedProgress | None = None,
    stopping: threading.Event | None = None,
) -> Outcome:
    """Run ``claim``'s stage and return how it ended, for :meth:`FencedWrites.finish` to commit.

    Starts the job first unless the claim did (``claim.started``), and reads the
    upstream outputs unless the claim carried them. A lease lost on the way
    (start, renewal, checkpoint) is the outcome ``lost``: nothing more is written.
    """
    try:
        if not claim.started:
            writes.start(claim)
        upstream = (
            dict(claim.upstream) if claim.upstream is not None else writes.upstream_outputs(claim)
        )
        ctx = RunContext(writes, claim, upstream, on_progress, stopping or threading.Event())
        return _run_stage(registry, claim, ctx, writes.store.raw_dialect)
    except LeaseLostError:
        return Outcome(claim, "lost")


def _run_stage(
    registry: StageRegistry, claim: Claim, ctx: RunContext, dialect: RawDialect
) -> Outcome:
    stage = registry.get(claim.stage_id)
    try:
        output = (
            run_isolated(stage.run, ctx, stage.stop_seconds) if stage.isolated else stage.run(ctx)
        )
    except JobCancelledError:
        return Outcome(claim, "cancelled")
    except WorkerStoppingError:
        return Outcome(claim, "released")
    except StageFailure as failure:
        return Outcome(claim, "fail", failure=failure)
    except LeaseLostError:
        raise
    except OSError as exc:  # files and devices: usually worth another attempt
        return Outcome(claim, "fail", failure=TransientStageError(f"{type(exc).__name__}: {exc}"))
    except Exception as exc:  # noqa: BLE001 - a stage's bug becomes a typed permanent failure
        return Outcome(
            claim,
            "fail",
            failure=PermanentStageError(
                f"the stage crashed: {type(exc).__name__}: {exc}", code=STAGE_CRASHED
            ),
        )
    return Outcome(
        claim, "complete", output=output, completion=completion_event(claim, output, dialect)
    )
