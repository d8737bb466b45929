"""A real worker process for the queue_procs tests, and the stage it runs.

Run from the repository root (``python -m tests.integration.queue_procs.worker_child``):

    STORE drain [--workers N] [--lease S] [--log FILE] [--open-at FILE] [--ready FILE] [--go FILE]
        a ThreadExecutor that drains the queue; it opens the store when --open-at exists,
        then writes --ready, then starts claiming when --go exists (each only if given)
    STORE once --result FILE [--lease S] [--marker-dir DIR]
        claims one job, runs it, writes {"pid", "token", "lease_lost", "state"} to --result;
        exits 3 when the run lost its lease

The stage ``procs.work`` takes ``steps`` short steps (sleep, a hash, progress, a checkpoint
every ``checkpoint_every``) and returns an output that depends only on its inputs and config,
so any worker that finishes it produces the same digest: :func:`expected_output`. When it
finishes it appends ``job_id pid start_ns end_ns resumed_from_step`` to --log.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
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


def _step(acc: str, step: int) -> str:
    return hashlib.sha256(f"{acc}:{step}".encode()).hexdigest()


def expected_output(input_digests: list[str], steps: int) -> dict[str, Any]:
    acc = hashlib.sha256(json.dumps(input_digests).encode()).hexdigest()
    for step in range(steps):
        acc = _step(acc, step)
    return {"inputs": input_digests, "acc": acc}


def make_registry(log: Path | None = None, marker_dir: Path | None = None) -> StageRegistry:
    def work(ctx: StageContext) -> StageOutput:
        start_ns = time.monotonic_ns()
        if marker_dir is not None:
            (marker_dir / f"{ctx.job_id}.{os.getpid()}.started").touch()
        steps, every = int(ctx.config["steps"]), int(ctx.config["checkpoint_every"])
        state = ctx.checkpoint or {"step": 0, "acc": expected_output(ctx.input_digests, 0)["acc"]}
        acc = state["acc"]
        for step in range(int(state["step"]), steps):
            time.sleep(float(ctx.config["step_seconds"]))
            acc = _step(acc, step)
            if every and (step + 1) % every == 0:
                ctx.save_checkpoint({"step": step + 1, "acc": acc})
            ctx.progress((step + 1) / steps, f"step {step + 1} of {steps}")
        if log is not None:
            with log.open("a") as fh:
                fh.write(f"{ctx.job_id} {os.getpid()} {start_ns} {time.monotonic_ns()} {state['step']}\n")
        return StageOutput({"inputs": ctx.input_digests, "acc": acc})

    return StageRegistry((Stage(STAGE_ID, schema_version=1, deterministic=True, run=work, max_attempts=50,
                                config_defaults={"steps": 4, "step_seconds": 0.01, "checkpoint_every": 0}),))


def _wait_for(path: str | None) -> None:
    """Block until ``path`` exists; ``<path>.<pid>.waiting`` tells the test we are at the barrier."""
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
    services = bootstrap(args.store, registry=make_registry(args.log), lease=LeaseTerms(args.lease))
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
    services = bootstrap(args.store, registry=make_registry(marker_dir=args.marker_dir), lease=LeaseTerms(args.lease))
    try:
        [claim] = services.queue.claim(1)
        result = run_claim(FencedWrites(services.queue), services.queue.registry, claim)
    finally:
        services.close()
    Path(args.result).write_text(json.dumps({
        "pid": os.getpid(), "token": claim.token, "lease_lost": result.lease_lost,
        "state": result.view.state.value if result.view else None}))
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
    args = parser.parse_args(argv)
    return _drain(args) if args.mode == "drain" else _once(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
