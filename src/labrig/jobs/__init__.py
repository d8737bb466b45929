"""The durable job queue, Qt-free, shared by the GUI's QThreadPool and ``labrig worker``: stages and
their registry, enqueueing with idempotency keys, claims under leases on a monotonic (or the
database's) clock, fenced writes, runs with progress, checkpoints and cancellation, and the
executors that drive them.

Modules: ``stages`` (what a stage declares), ``queue`` (enqueue, claim, cancel, reprocess),
``lease``, ``fenced`` (writes a worker may still make), ``runner`` (one claimed job), ``executor``
(a pool of workers), ``isolation`` (a stage in a child process), ``views`` (read-only job rows),
``builtin`` (``labrig.selftest``).
"""

from labrig.jobs.builtin import BUILTIN_STAGES
from labrig.jobs.executor import ThreadExecutor
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.lease import Clock, LeaseTerms
from labrig.jobs.queue import WORKER_STOPPED, JobQueue
from labrig.jobs.runner import RunResult, run_claim, yield_to_recording
from labrig.jobs.stages import (
    NO_MODEL_DIGEST,
    Setting,
    Stage,
    StageContext,
    StageOutput,
    StageRegistry,
    in_range,
)
from labrig.jobs.views import Claim, JobView

__all__ = [
    "BUILTIN_STAGES",
    "NO_MODEL_DIGEST",
    "WORKER_STOPPED",
    "Claim",
    "Clock",
    "FencedWrites",
    "JobQueue",
    "JobView",
    "LeaseTerms",
    "RunResult",
    "Setting",
    "Stage",
    "StageContext",
    "StageOutput",
    "StageRegistry",
    "ThreadExecutor",
    "in_range",
    "run_claim",
    "yield_to_recording",
]
