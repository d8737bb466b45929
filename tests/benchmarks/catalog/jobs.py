"""Jobs: each attempt's pipeline as first requested and as reprocessed, the jobs' dependencies,
outputs and events, as the queue would have left them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from labrig.domain.events import EventName
from labrig.domain.idempotency import canonical_json, idempotency_key, sha256_hex
from labrig.domain.jobs import JobState
from labrig.jobs.rows import JOB_COLUMNS
from tests.benchmarks.catalog.events import Events
from tests.benchmarks.catalog.lab import MINUTE, PIPELINE, PLACES, STAGES, S, uuid4_text
from tests.benchmarks.catalog.outputs import blocked_reason, degraded_reasons, stage_output
from tests.benchmarks.catalog.rows import JOB_TIMES, Chunk, Draft, JobRow

J = JobState


class Jobs(Events):
    """The attempt's jobs (the second layer of the generator)."""

    def settle(self, stage_id: str, calibration: str) -> tuple[str, str]:
        """The job's config text and digest, as the queue settles the pipeline step's config."""
        key = (stage_id, calibration if stage_id == "tracking.rig" else None)
        if key not in self.settled:
            config = dict(PIPELINE[stage_id][0])
            if "rig_calibration_id" in config:
                config["rig_calibration_id"] = calibration
            self.settled[key] = self.stages[stage_id].settle(config)
        return self.settled[key]

    def key(self, stage_id: str, inputs: Sequence[str], config_digest: str) -> str:
        stage = self.stages[stage_id]
        return idempotency_key(
            stage_id, inputs, stage.model_manifest_digest, config_digest, stage.schema_version
        )

    def _job(
        self, a: Draft, stage_id: str, state: J, created: int, updated: int, supersedes: str | None
    ) -> JobRow:
        """A job of the pipeline as enqueued, waiting for its inputs (no idempotency key yet)."""
        stage = self.stages[stage_id]
        config, digest = self.settle(stage_id, a.calibration)
        return JobRow(
            id=uuid4_text(self.rng),
            stage_id=stage_id,
            attempt_id=a.id,
            state=state.value,
            created_at=created,
            updated_at=updated,
            input_digests=json.dumps(a.manifests),  # the attempt's captures, in order
            config=config,
            config_digest=digest,
            model_manifest_digest=stage.model_manifest_digest,
            schema_version=stage.schema_version,
            idempotency_key=None,
            deterministic=stage.deterministic,
            supersedes_job_id=supersedes,
            max_attempts=stage.max_attempts,
        )

    def _jobs(self, chunk: Chunk, a: Draft) -> tuple[list[JobRow], int]:
        """The attempt's 10 jobs, their dependencies, outputs and events: the pipeline as first
        requested (superseded) and as reprocessed; the live jobs, and when the last of them
        ended."""
        rng = self.rng
        reprocessed = a.created + rng.randrange(20 * S, 180 * S)
        first_run = [
            self._job(a, stage_id, J.SUPERSEDED, a.created + k * 1000, reprocessed, None)
            for k, stage_id in enumerate(STAGES)
        ]
        head = first_run[0]  # the only one that was Ready (the others waited for its output)
        head.idempotency_key = self.key(head.stage_id, a.manifests, head.config_digest)
        self.event(a, a.created, EventName.STAGE_REQUESTED, self._requested(head))
        live: list[JobRow] = []
        ready_at, ended = reprocessed, reprocessed
        for k, stage_id in enumerate(STAGES):
            created = reprocessed + k * 1000
            job = self._job(a, stage_id, J.INPUTS_PENDING, created, created, first_run[k].id)
            live.append(job)
            fate = self._fate(a, k)
            if fate == "waiting":
                continue
            if fate == "upstream_failed":  # failed with the job it waited for
                upstream = live[k - 1]
                job.state = J.PERMANENT_FAILURE.value
                job.error_code = "LABRIG_INPUT_UNAVAILABLE"
                job.error_message = f"input job {upstream.id} ended PermanentFailure without output"
                job.updated_at = upstream.updated_at
                continue
            inputs = a.manifests + ([live[k - 1].output_digest or ""] if k else [])
            job.input_digests = json.dumps(inputs)
            job.idempotency_key = self.key(stage_id, inputs, job.config_digest)
            job.state, job.updated_at = J.READY.value, ready_at
            self.event(a, ready_at, EventName.STAGE_REQUESTED, self._requested(job))
            if fate == "pending":
                self._in_progress(a, job)
                continue
            _config, low, high = PIPELINE[stage_id]
            started = ready_at + rng.randrange(S // 5, 20 * S)
            finished = started + int(rng.uniform(low, high) * S)
            job.attempts = job.fencing_token = 1
            if fate == "blocked":
                job.updated_at = ended = finished
                code, reason = blocked_reason(self.rng, a, stage_id)
                job.state, job.error_code = J.BLOCKED_BY_QUALITY.value, code
                job.error_message = reason
                self.event(a, finished, EventName.STAGE_FAILED, self._failed(job, False))
                self.event(
                    a,
                    finished,
                    EventName.QUALITY_BLOCKED,
                    {"attempt_id": a.id, "job_id": job.id, "reasons": [reason]},
                )
            elif fate == "failed":
                self._failed_run(a, job, started)
                ended = job.updated_at
            else:
                self._succeeded(chunk, a, job, started, finished, degraded=fate == "degraded")
                ready_at = ended = finished
        for run in (first_run, live):
            for job in run:
                chunk.add("jobs", *self._values(job))
            for k in range(1, len(run)):
                chunk.add("job_dependencies", run[k].id, run[k - 1].id)
        return live, ended

    @staticmethod
    def _fate(a: Draft, k: int) -> str:
        """What became of the attempt's live job at stage ``k``."""
        if a.outcome == "published" or k < a.at:
            return "ok"
        if a.outcome == "degraded":
            return "degraded" if k == a.at else "ok"
        if a.outcome == "blocked":
            return "blocked" if k == a.at else "waiting"
        if a.outcome == "failed":
            return "failed" if k == a.at else "upstream_failed"
        return "pending" if k == a.at else "waiting"

    def _succeeded(
        self, chunk: Chunk, a: Draft, job: JobRow, started: int, finished: int, *, degraded: bool
    ) -> None:
        """A job that committed its output (after a retry now and then)."""
        rng = self.rng
        if rng.random() < 0.01:
            job.attempts = job.fencing_token = 2
            job.error_code = "LABRIG_WORKER_LOST"
            self.event(a, started + 10 * S, EventName.STAGE_FAILED, self._failed(job, True))
            job.error_code = None
        reasons = degraded_reasons(self.rng, a, job.stage_id) if degraded else []
        shared = (job.stage_id, id(a.template), a.calibration)  # the 3-D stages' outputs repeat
        if not reasons and shared in self.shared_outputs:
            text, digest = self.shared_outputs[shared]
        else:
            text = canonical_json(stage_output(a, job.stage_id, reasons)).decode()
            digest = sha256_hex(text.encode())
            if not reasons and job.stage_id in ("reconstruction.3d", "kinematics.3d"):
                self.shared_outputs[shared] = (text, digest)
        assert job.idempotency_key is not None
        job.state = (J.SUCCEEDED_DEGRADED if reasons else J.SUCCEEDED).value
        job.output_digest, job.progress, job.updated_at = digest, 1.0, finished
        chunk.add(
            "job_outputs",
            job.idempotency_key,
            job.id,
            job.fencing_token,
            digest,
            text,
            self.t(finished),
        )
        self.outputs.bodies[job.idempotency_key] = text
        self.event(
            a,
            finished,
            EventName.STAGE_COMPLETED,
            {
                "job_id": job.id,
                "stage_id": job.stage_id,
                "idempotency_key": job.idempotency_key,
                "output_digest": digest,
            },
        )
        if reasons:
            self.event(
                a,
                finished,
                EventName.QUALITY_DEGRADED,
                {"attempt_id": a.id, "job_id": job.id, "reasons": reasons},
            )

    def _failed_run(self, a: Draft, job: JobRow, started: int) -> None:
        """A job that failed at every attempt: PermanentFailure after its retries."""
        rng = self.rng
        worker = f"{a.plan.host}:{rng.randrange(1000, 65000)}:{rng.getrandbits(32):08x}"
        code, why = rng.choice(
            (
                ("LABRIG_WORKER_LOST", f"worker {worker} stopped renewing its lease"),
                (
                    "LABRIG_STAGE_CRASHED",
                    "the stage's process ended without a result (exit code -9: out of memory?)",
                ),
            )
        )
        job.attempts = job.fencing_token = job.max_attempts
        job.state, job.error_code = J.PERMANENT_FAILURE.value, code
        job.error_message = f"{why} (gave up after {job.attempts} attempts)"
        for retry in range(1, job.max_attempts):
            self.event(a, started + retry * MINUTE, EventName.STAGE_FAILED, self._failed(job, True))
        job.updated_at = started + job.max_attempts * MINUTE
        self.event(a, job.updated_at, EventName.STAGE_FAILED, self._failed(job, False))

    def _in_progress(self, a: Draft, job: JobRow) -> None:
        """The job a pending attempt is at: Ready, Running on a workstation now, or waiting to
        retry after its worker was lost."""
        rng = self.rng
        fate = rng.choices(("ready", "running", "retry"), (70, 15, 15))[0]
        if fate == "ready":
            return
        owner = f"{a.plan.host}:{rng.randrange(1000, 65000)}:{rng.getrandbits(32):08x}"
        job.attempts = job.fencing_token = 1
        if fate == "running":
            job.state = J.RUNNING.value
            job.owner, job.lease_host = owner, a.plan.host
            job.lease_boot_id = f"{rng.getrandbits(128):032x}"
            job.lease_deadline_mono = round(rng.uniform(1e4, 1e6), 3)
            job.lease_expires_at = self.now + rng.randrange(20 * S, 60 * S)
            job.updated_at = self.now - rng.randrange(S, 30 * S)
            job.progress = round(rng.uniform(0.05, 0.95), 3)
            job.progress_message = f"tracking camera {rng.choice(PLACES)}"
            return
        job.state = J.RETRY_WAITING.value
        job.error_code = "LABRIG_WORKER_LOST"
        job.error_message = f"worker {owner} stopped renewing its lease"
        job.updated_at = self.now - rng.randrange(30 * S, 10 * MINUTE)
        job.next_attempt_at = self.now + rng.randrange(10 * S, 120 * S)
        self.event(a, job.updated_at, EventName.STAGE_FAILED, self._failed(job, True))

    @staticmethod
    def _requested(job: JobRow) -> dict[str, Any]:
        return {
            "job_id": job.id,
            "stage_id": job.stage_id,
            "idempotency_key": job.idempotency_key,
            "attempt_id": job.attempt_id,
        }

    @staticmethod
    def _failed(job: JobRow, retryable: bool) -> dict[str, Any]:
        return {
            "job_id": job.id,
            "stage_id": job.stage_id,
            "idempotency_key": job.idempotency_key,
            "error_code": job.error_code,
            "retryable": retryable,
        }

    def _values(self, job: JobRow) -> tuple[Any, ...]:
        t = self.t
        return tuple(
            t(value) if column in JOB_TIMES and value is not None else value
            for column, value in ((c, getattr(job, c)) for c in JOB_COLUMNS)
        )
