"""Stage functions importable by a spawned child process (isolated stages must be importable)."""

from __future__ import annotations

import os
import time

from labrig.errors import QualityBlockedError
from labrig.jobs.stages import StageContext, StageOutput


def report_pid(ctx: StageContext) -> StageOutput:
    for i in range(3):
        ctx.progress((i + 1) / 3, f"step {i + 1}")
    ctx.save_checkpoint({"done": 3})
    return StageOutput({"pid": os.getpid(), "inputs": ctx.input_digests}, ("ran isolated",))


def blocked(ctx: StageContext) -> StageOutput:
    raise QualityBlockedError(["too few markers"], code="LABRIG_TOO_FEW_MARKERS")


def dies(ctx: StageContext) -> StageOutput:
    os._exit(3)


def waits_for_cancel(ctx: StageContext) -> StageOutput:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        ctx.progress(0.1, "waiting")
        ctx.check_cancelled()
        time.sleep(0.02)
    return StageOutput({"cancel": "never came"})


def deaf(ctx: StageContext) -> StageOutput:
    """Says where it runs (its process id, in the file ``config["pid_file"]``), then runs for two
    minutes without checking for a cancel or a stop."""
    path = ctx.config["pid_file"]
    with open(f"{path}.part", "w", encoding="ascii") as fh:
        fh.write(str(os.getpid()))
    os.replace(f"{path}.part", path)
    time.sleep(120)
    return StageOutput({"heard": "nothing"})
