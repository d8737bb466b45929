"""Stages that ship with the queue itself.

``labrig.selftest`` exercises the whole path (progress, checkpoints, cancel,
output commit) so an operator can check a worker end to end:
``labrig jobs enqueue labrig.selftest --config '{"steps": 5, "step_seconds": 0.2}'``.
"""

from __future__ import annotations

import time

from labrig.jobs.stages import Setting, Stage, StageContext, StageOutput, in_range


def _selftest(ctx: StageContext) -> StageOutput:
    steps = int(ctx.config.get("steps", 0))
    start = int((ctx.checkpoint or {}).get("step", 0))
    for step in range(start, steps):
        ctx.check_cancelled()
        time.sleep(float(ctx.config.get("step_seconds", 0.0)))
        if (
            ctx.config.get("checkpoint_every")
            and (step + 1) % int(ctx.config["checkpoint_every"]) == 0
        ):
            ctx.save_checkpoint({"step": step + 1})
        ctx.progress((step + 1) / steps, f"step {step + 1} of {steps}")
    return StageOutput({"stage": ctx.stage_id, "inputs": ctx.input_digests, "config": ctx.config})


SELFTEST = Stage(
    "labrig.selftest",
    schema_version=1,
    deterministic=True,
    run=_selftest,
    config_defaults={"steps": 0, "step_seconds": 0.0},
    max_attempts=3,
    description="checks the queue end to end; output depends only on inputs and config",
    config_schema={
        "steps": Setting((int,), "progress steps to run", check=in_range(0, 1_000_000)),
        "step_seconds": Setting((float,), "seconds each step sleeps", check=in_range(0, 3600)),
        "checkpoint_every": Setting(
            (int,), "save a checkpoint every N steps", nullable=True, check=in_range(1, 1_000_000)
        ),
    },
)

BUILTIN_STAGES = (SELFTEST,)
