"""Running a stage in a child process, for stages that hold the GIL for long.

The worker thread stays in charge: it relays the child's progress and
checkpoints through the fenced writes (renewing the lease as it goes), passes
an operator's cancel and the worker's stop down, and turns the child's outcome
into the same typed results as an in-thread stage. A child that has not ended
within the stage's ``stop_seconds`` of a cancel or stop is killed, and its job
cancelled or handed back as if it had ended itself. A child that dies without
an answer is a transient failure (retried with backoff, bounded by the stage's
attempts).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import time
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from labrig.errors import JobCancelledError, StageFailure, TransientStageError
from labrig.jobs.stages import StageContext, StageOutput, WorkerStoppingError

POLL_SECONDS = 0.1
_SPAWN = mp.get_context("spawn")  # no fork: the parent holds SQLite connections and threads
#: what the parent asks of the child: "cancel" (an operator's) or "stop" (the worker's)
CANCEL, STOP = "cancel", "stop"

log = logging.getLogger(__name__)


class _ChildContext:
    """The StageContext seen inside the child; every call is a message to the parent."""

    def __init__(self, conn: Connection, fields: dict[str, Any]) -> None:
        self._conn = conn
        self._cancelled = self._stopping = False
        self.job_id, self.stage_id = fields["job_id"], fields["stage_id"]
        self.input_digests, self.config = fields["input_digests"], fields["config"]
        self.checkpoint, self.upstream = fields["checkpoint"], fields["upstream"]

    def _poll_parent(self) -> None:
        while self._conn.poll():
            asked = self._conn.recv()
            self._cancelled |= asked == CANCEL
            self._stopping |= asked == STOP

    def progress(self, fraction: float, message: str = "") -> None:
        self._conn.send(("progress", fraction, message))
        self._poll_parent()

    def save_checkpoint(self, state: Mapping[str, Any]) -> None:
        self._conn.send(("checkpoint", dict(state)))
        self.checkpoint = dict(state)

    @property
    def cancelled(self) -> bool:
        self._poll_parent()
        return self._cancelled

    def check_cancelled(self) -> None:
        if self.cancelled:  # reads what the parent asked
            raise JobCancelledError("cancelled by an operator")
        if self._stopping:
            raise WorkerStoppingError


def _child_main(
    run: Callable[[StageContext], StageOutput], fields: dict[str, Any], conn: Connection
) -> None:
    ctx = _ChildContext(conn, fields)
    try:
        output = run(ctx)
        conn.send(("output", dict(output.body), list(output.degraded_reasons)))
    except JobCancelledError:
        conn.send(("cancelled",))
    except WorkerStoppingError:
        conn.send(("stopped",))
    except StageFailure as failure:
        conn.send(
            (
                "failure",
                type(failure).__name__,
                failure.code,
                failure.message,
                getattr(failure, "reasons", None),
            )
        )
    except Exception as exc:  # noqa: BLE001 - reported to the parent as a crash
        conn.send(("crash", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def run_isolated(
    run: Callable[[StageContext], StageOutput], ctx: StageContext, stop_seconds: float
) -> StageOutput:
    """Run ``run(ctx)`` in a spawned child process; same outcomes as calling it here. A child
    still running ``stop_seconds`` after a cancel or stop reached it is killed."""
    parent_conn, child_conn = _SPAWN.Pipe()
    fields = {
        "job_id": ctx.job_id,
        "stage_id": ctx.stage_id,
        "input_digests": ctx.input_digests,
        "config": ctx.config,
        "checkpoint": ctx.checkpoint,
        "upstream": dict(ctx.upstream),
    }
    child = _SPAWN.Process(target=_child_main, args=(run, fields, child_conn), daemon=True)
    child.start()
    child_conn.close()
    try:
        return _relay(parent_conn, child, ctx, stop_seconds)
    finally:
        if child.is_alive():
            child.kill()
        child.join()


def _relay(conn: Connection, child: Any, ctx: StageContext, stop_seconds: float) -> StageOutput:
    asked, asked_at = None, 0.0  # what the child was asked to do (cancel or stop), and when
    while True:
        if conn.poll(POLL_SECONDS):
            try:
                message = conn.recv()
            except EOFError:
                _died(child)
            outcome = _handle(message, ctx)
            if outcome is not None:
                return outcome
        elif not child.is_alive() and not conn.poll():
            _died(child)
        if asked is None:
            asked = _to_ask(ctx)  # also renews the lease when due
            if asked is not None:
                conn.send(asked)
                asked_at = time.monotonic()
        elif time.monotonic() - asked_at >= stop_seconds:
            _kill_unanswered(child, asked, stop_seconds)
        else:
            _ = ctx.cancelled  # renews the lease while the child ends


def _to_ask(ctx: StageContext) -> str | None:
    """What the child is to be asked now: to stop (the worker is stopping), to cancel (an
    operator asked), or nothing."""
    try:
        ctx.check_cancelled()
    except WorkerStoppingError:
        return STOP
    except JobCancelledError:
        return CANCEL
    return None


def _kill_unanswered(child: Any, asked: str, stop_seconds: float) -> NoReturn:
    """The child did not end within ``stop_seconds`` of being asked: killed, and the run ends as
    the child should have ended it."""
    log.warning(
        "the stage's process %s did not end within %g s of the %s; killed it",
        child.pid,
        stop_seconds,
        "worker's stop" if asked == STOP else "cancel",
    )
    child.kill()
    child.join()
    if asked == STOP:
        raise WorkerStoppingError
    raise JobCancelledError(
        f"cancelled by an operator (the stage's process did not end within {stop_seconds:g} s "
        "and was killed)"
    )


def _handle(message: tuple[Any, ...], ctx: StageContext) -> StageOutput | None:
    kind = message[0]
    if kind == "progress":
        ctx.progress(message[1], message[2])
        return None
    if kind == "checkpoint":
        ctx.save_checkpoint(message[1])
        return None
    if kind == "output":
        return StageOutput(message[1], tuple(message[2]))
    if kind == "cancelled":
        raise JobCancelledError("cancelled by an operator")
    if kind == "stopped":
        raise WorkerStoppingError
    if kind == "failure":
        raise _rebuild_failure(*message[1:])
    if kind == "crash":
        raise RuntimeError(message[1])
    raise TypeError(f"unexpected message from the stage's process: {kind!r}")


def _died(child: Any) -> NoReturn:
    child.join(5)
    raise TransientStageError(
        f"the stage's process ended without an answer (exit code {child.exitcode})"
    )


def _rebuild_failure(
    class_name: str, code: str, message: str, reasons: list[str] | None
) -> StageFailure:
    from labrig import errors

    cls = getattr(errors, class_name, StageFailure)
    if reasons is not None:
        return errors.QualityBlockedError(reasons, code=code)
    failure: StageFailure = cls(message, code=code)
    return failure
