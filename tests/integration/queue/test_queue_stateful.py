"""Hypothesis drives the queue with random producers, two workers, operators and time.

Whatever the interleaving: states stay in the seed's set, terminal jobs never
change, only the current token holder can write, and each key has one output.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, rule
from sqlalchemy import select

from labrig.domain.jobs import TERMINAL, JobState
from labrig.errors import LabrigError, LeaseLostError, StageFailure, TransientStageError
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.lease import LeaseTerms
from labrig.jobs.policy import RetryPolicy
from labrig.jobs.queue import JobQueue
from labrig.jobs.stages import StageOutput, StageRegistry
from labrig.jobs.views import Claim
from labrig.store import open_store
from labrig.store.models import Job, JobOutput
from tests.integration.queue.conftest import STAGES, FakeClock, Time

TERMINAL_VALUES = {s.value for s in TERMINAL}


class QueueMachine(RuleBasedStateMachine):
    claims = Bundle("claims")

    @initialize()
    def open(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="labrig-stateful-"))
        self.store = open_store(self.dir)
        self.time = Time()
        registry = StageRegistry(STAGES)
        self.workers: list[tuple[JobQueue, FencedWrites]] = []
        for nonce in ("a", "b"):
            q = JobQueue(
                self.store,
                registry,
                FakeClock(self.time, nonce),
                LeaseTerms(10.0),
                RetryPolicy(base_seconds=1.0, cap_seconds=4.0),
            )
            self.workers.append((q, FencedWrites(q)))
        self.terminal_seen: dict[str, str] = {}

    def teardown(self) -> None:
        if hasattr(self, "store"):
            self.store.close()
            shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def queue(self) -> JobQueue:
        return self.workers[0][0]

    def _job_ids(self) -> list[str]:
        return [v.id for v in self.queue.jobs()]

    @rule(
        stage=st.sampled_from(["t.echo", "t.degraded", "t.loose"]),
        inputs=st.lists(st.sampled_from("xyz"), max_size=2),
        priority=st.integers(0, 2),
        after=st.booleans(),
    )
    def enqueue(self, stage: str, inputs: list[str], priority: int, after: bool) -> None:
        ids = self._job_ids()
        self.queue.enqueue(
            stage, inputs, priority=priority, depends_on=ids[-1:] if after and ids else ()
        )

    @rule(target=claims, worker=st.integers(0, 1), slots=st.integers(1, 2))
    def claim(self, worker: int, slots: int) -> list[tuple[int, Claim]]:
        return [(worker, c) for c in self.workers[worker][0].claim(slots)]

    @rule(
        held=claims,
        action=st.sampled_from(
            ["start", "complete", "transient", "renew", "checkpoint", "release"]
        ),
    )
    def worker_write(self, held: list[tuple[int, Claim]], action: str) -> None:
        for worker, claim in held:
            writes = self.workers[worker][1]
            before = self._snapshot(claim.job_id)
            try:
                self._write(writes, claim, action)
            except LeaseLostError:
                assert self._snapshot(claim.job_id) == before, "a refused write changed the job"
            except LabrigError:
                pass  # e.g. completing a job not started yet: refused with a typed error

    @staticmethod
    def _write(writes: FencedWrites, claim: Claim, action: str) -> None:
        if action == "start":
            writes.start(claim)
        elif action == "complete":
            writes.complete(
                claim, StageOutput({"job": claim.stage_id, "inputs": claim.input_digests})
            )
        elif action == "transient":
            failure: StageFailure = TransientStageError("device busy")
            writes.fail(claim, failure)
        elif action == "renew":
            writes.renew(claim, 0.5)
        elif action == "checkpoint":
            writes.checkpoint(claim, {"at": 1})
        else:
            writes.release(claim)

    @rule(seconds=st.sampled_from([0.5, 4.0, 11.0]))
    def time_passes(self, seconds: float) -> None:
        self.time.advance(seconds)

    @rule(
        index=st.integers(0, 30), action=st.sampled_from(["cancel", "reprocess", "release_blocked"])
    )
    def operator(self, index: int, action: str) -> None:
        ids = self._job_ids()
        if not ids:
            return
        job_id = ids[index % len(ids)]
        try:
            getattr(self.queue, action)(job_id)
        except LabrigError as exc:
            assert exc.code in {"LABRIG_TERMINAL_STATE", "LABRIG_INVALID_TRANSITION"}

    def _snapshot(self, job_id: str) -> tuple[object, ...]:
        v = self.queue.get(job_id)
        return (v.state, v.attempts, v.progress, v.owner, v.output_digest, v.error_code)

    @invariant()
    def terminal_jobs_never_change(self) -> None:
        if not hasattr(self, "store"):
            return
        for view in self.queue.jobs():
            if view.id in self.terminal_seen:
                assert view.state.value == self.terminal_seen[view.id]
            elif view.state.value in TERMINAL_VALUES:
                self.terminal_seen[view.id] = view.state.value

    @invariant()
    def leases_and_outputs_are_consistent(self) -> None:
        if not hasattr(self, "store"):
            return
        with self.store.read() as s:
            outputs = {o.idempotency_key: o.digest for o in s.scalars(select(JobOutput))}
            for job in s.scalars(select(Job)):
                assert job.state in {st.value for st in JobState}
                held = job.state in ("Leased", "Running", "Checkpointed")
                assert (job.owner is not None) == held, (job.state, job.owner)
                if job.state in ("Succeeded", "SucceededDegraded"):
                    assert job.output_digest == outputs[job.idempotency_key]


QueueMachine.TestCase.settings = settings(max_examples=30, stateful_step_count=25, deadline=None)
TestQueueStateful = QueueMachine.TestCase
