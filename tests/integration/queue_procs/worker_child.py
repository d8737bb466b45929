"""A real worker process for the queue_procs tests, and the stage it runs.

Run from the repository root (``python -m tests.integration.queue_procs.worker_child``):

    STORE drain [--workers N] [--lease S] [--log FILE] [--open-at FILE] [--ready FILE] [--go FILE]
                [--hold FILE] [--meet DIR --meet-count N]
        a ThreadExecutor that drains the queue; it opens the store when --open-at exists,
        then writes --ready, then starts claiming when --go exists (each only if given)
    STORE once --result FILE [--lease S] [--marker-dir DIR] [--gate FILE]
        claims one job, runs it, writes {"pid", "token", "lease_lost", "state"} to --result;
        exits 3 when the run lost its lease

The stage ``procs.work`` takes ``steps`` short steps (sleep, a hash, progress, a checkpoint
every ``checkpoint_every``) and returns an output that depends only on its inputs and config,
so any worker that finishes it produces the same digest: :func:`expected_output`. When it
finishes it appends ``job_id pid start_ns end_ns resumed_from_step`` to --log.

Hooks that let a test make the moment it needs happen instead of hoping for it:

* ``--hold FILE``: once the test writes a step number ``K`` to FILE (:func:`request_hold`), the next
  run to start in this process takes the request, runs its first K steps (saving their checkpoints),
  writes ``FILE.held`` and stops there: a stage that is running for certain, until the test kills
  the process (:data:`HOLD_S` at most). A run resumed past step K stops at the step it resumed at.
* ``--meet DIR --meet-count N``: the first run of each process announces itself in DIR and waits
  until N processes have (at most :data:`MEET_S`): every process is running stages at once.
* ``--marker-dir DIR`` / ``--gate FILE``: each run touches ``DIR/<job>.<pid>.started``, then
  waits until FILE exists (at most :data:`MEET_S`) before its first step.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from labrig.bootstrap import bootstrap
from labrig.jobs.executor import ThreadExecutor
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.lease import LeaseTerms
from labrig.jobs.policy import RetryPolicy
from labrig.jobs.runner import run_claim
from labrig.jobs.stages import Stage, StageContext, StageOutput, StageRegistry

STAGE_ID = "procs.work"
LEASE_LOST_EXIT = 3
FAST_RETRY = RetryPolicy(base_seconds=0.02, cap_seconds=0.1)  # killed jobs come back at once
HOLD_S = 120.0  # a held run waits this long for the test's kill: never outlive a test that failed
MEET_S = 60.0  # the longest a run waits for the other processes (--meet) or for its gate (--gate)


def _step(acc: str, step: int) -> str:
    return hashlib.sha256(f"{acc}:{step}".encode()).hexdigest()


def expected_output(input_digests: list[str], steps: int) -> dict[str, Any]:
    acc = hashlib.sha256(json.dumps(input_digests).encode()).hexdigest()
    for step in range(steps):
        acc = _step(acc, step)
    return {"inputs": input_digests, "acc": acc}


def request_hold(hold: Path, step: int) -> None:
    """Ask the process started with ``--hold hold`` to stop its next run at ``step`` (see
    the module doc)."""
    tmp = hold.with_name(hold.name + ".tmp")
    tmp.write_text(str(step))
    os.replace(tmp, hold)  # a run never reads a half-written request


def _take_hold(hold: Path | None, job_id: str) -> int | None:
    """The step this run is to stop at, if a hold request is pending: the first run to
    rename it takes it."""
    if hold is None:
        return None
    taken = hold.with_name(f"{hold.name}.{job_id}.taken")
    try:
        os.rename(hold, taken)
    except FileNotFoundError:
        return None
    return int(taken.read_text())


def _hold_here(hold: Path, job_id: str, step: int) -> None:
    Path(f"{hold}.held").write_text(f"{job_id} {step}\n")
    time.sleep(HOLD_S)  # the test kills this process now


def _meet(meet: Path, count: int) -> None:
    (meet / str(os.getpid())).touch()
    # if another never comes, go on: the test's assertions say so
    deadline = time.monotonic() + MEET_S
    while len(list(meet.iterdir())) < count and time.monotonic() < deadline:
        time.sleep(0.002)


def make_registry(
    log: Path | None = None,
    marker_dir: Path | None = None,
    *,
    hold: Path | None = None,
    meet: Path | None = None,
    meet_count: int = 0,
    gate: Path | None = None,
) -> StageRegistry:
    met = threading.Event()

    def work(ctx: StageContext) -> StageOutput:
        start_ns = time.monotonic_ns()
        if marker_dir is not None:
            (marker_dir / f"{ctx.job_id}.{os.getpid()}.started").touch()
        if gate is not None:
            deadline = time.monotonic() + MEET_S
            while not gate.exists() and time.monotonic() < deadline:
                time.sleep(0.002)
        if meet is not None and not met.is_set():
            _meet(meet, meet_count)
            met.set()
        hold_at = _take_hold(hold, ctx.job_id)

        def hold_if_due(step: int) -> None:
            nonlocal hold_at
            if hold is not None and hold_at is not None and step >= hold_at:
                _hold_here(hold, ctx.job_id, step)
                hold_at = None

        steps, every = int(ctx.config["steps"]), int(ctx.config["checkpoint_every"])
        state = ctx.checkpoint or {"step": 0, "acc": expected_output(ctx.input_digests, 0)["acc"]}
        acc = state["acc"]
        for step in range(int(state["step"]), steps):
            hold_if_due(step)
            time.sleep(float(ctx.config["step_seconds"]))
            acc = _step(acc, step)
            if every and (step + 1) % every == 0:
                ctx.save_checkpoint({"step": step + 1, "acc": acc})
            ctx.progress((step + 1) / steps, f"step {step + 1} of {steps}")
        # resumed with every step checkpointed: it still stops, before it returns
        hold_if_due(steps)
        if log is not None:
            with log.open("a") as fh:
                fh.write(
                    f"{ctx.job_id} {os.getpid()} {start_ns} {time.monotonic_ns()} {state['step']}\n"
                )
        return StageOutput({"inputs": ctx.input_digests, "acc": acc})

    return StageRegistry(
        (
            Stage(
                STAGE_ID,
                schema_version=1,
                deterministic=True,
                run=work,
                max_attempts=50,
                config_defaults={"steps": 4, "step_seconds": 0.01, "checkpoint_every": 0},
            ),
        )
    )


def _wait_for(path: str | None) -> None:
    """Block until ``path`` exists; ``<path>.<pid>.waiting`` tells the test we are at the
    barrier."""
    if not path:
        return
    Path(f"{path}.{os.getpid()}.waiting").touch()
    deadline = time.monotonic() + 60  # never outlive a test that failed to release us
    while not Path(path).exists():
        if time.monotonic() > deadline:
            sys.exit(f"gave up waiting for {path}")
        time.sleep(0.002)


def _drain(args: argparse.Namespace) -> int:
    _wait_for(args.open_at)
    registry = make_registry(args.log, hold=args.hold, meet=args.meet, meet_count=args.meet_count)
    services = bootstrap(args.store, registry=registry, lease=LeaseTerms(args.lease))
    services.queue.retry = FAST_RETRY
    executor = ThreadExecutor(services.queue, workers=args.workers, poll_seconds=0.05)
    if args.ready:
        Path(args.ready).touch()
    _wait_for(args.go)
    try:
        executor.run(drain=True)
    finally:
        services.close()
    return 0


def _once(args: argparse.Namespace) -> int:
    registry = make_registry(marker_dir=args.marker_dir, gate=args.gate)
    services = bootstrap(args.store, registry=registry, lease=LeaseTerms(args.lease))
    try:
        [claim] = services.queue.claim(1)
        result = run_claim(FencedWrites(services.queue), services.queue.registry, claim)
    finally:
        services.close()
    Path(args.result).write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "token": claim.token,
                "lease_lost": result.lease_lost,
                "state": result.view.state.value if result.view else None,
            }
        )
    )
    return LEASE_LOST_EXIT if result.lease_lost else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("mode", choices=["drain", "once"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--lease", type=float, default=30.0)
    parser.add_argument("--log", type=Path)
    parser.add_argument("--open-at")
    parser.add_argument("--ready")
    parser.add_argument("--go")
    parser.add_argument("--result")
    parser.add_argument("--marker-dir", type=Path)
    parser.add_argument("--hold", type=Path)
    parser.add_argument("--meet", type=Path)
    parser.add_argument("--meet-count", type=int, default=0)
    parser.add_argument("--gate", type=Path)
    args = parser.parse_args(argv)
    return _drain(args) if args.mode == "drain" else _once(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
