"""Claiming jobs (Qt-free): the workers' leases, taken for free slots only, with the reaping of
leases that lapsed and the waking of retries that are due; on the raw path in the usual case, in a
write session when there is reaping to do.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from labrig.jobs.lease import deadlines, lease_expired
from labrig.jobs.queue_core import LEASE_HELD, WORKER_LOST, QueueCore, S
from labrig.jobs.views import Claim
from labrig.store import RawTransaction
from labrig.store.models import Job


class Claiming(QueueCore):
    """The workers' claiming part of :class:`~labrig.jobs.queue.JobQueue`."""

    def claim(self, slots: int, start: bool = False) -> list[Claim]:
        """In one short write transaction: reap lost leases, wake due retries, lease up
        to ``slots`` jobs.

        Claims only as many jobs as the caller has free worker slots, so no claimed
        job waits for a thread while its lease runs out. With ``start`` the claim also
        moves each job Leased → Running (the caller starts the stage at once), saving
        the separate start transaction; the attempt is then charged from the claim on.
        """
        if slots <= 0:
            return []
        with self.store.write() as session:
            return self.claim_in(session, slots, start)

    def claim_in(
        self, session: Session, slots: int, start: bool = False, reap: bool = True
    ) -> list[Claim]:
        """:meth:`claim` inside the caller's write transaction (``reap``: reap and wake first)."""
        if reap:
            self._reap_expired(session)
            self._wake_due_retries(session)
        if slots <= 0:
            return []
        return self.lease_ready(self.store.raw_in(session), slots, start)

    def needs_reaping(self, tx: RawTransaction) -> bool:
        """Whether a lease has lapsed or a retry is due: work for :meth:`claim_in`'s ORM paths.

        Looked for at most every :attr:`reap_check_seconds` (False in between): a worker's
        commits ask at each one, and what they find can wait that long. :meth:`claim` and
        :meth:`reap` always look."""
        if time.monotonic() < self._reap_check_due:
            return False
        now = self.shared_now(tx)
        rows = tx.execute(self.sql.held_or_due, {"now": tx.dialect.to_db_datetime(now)}).fetchall()
        found = any(
            due
            or lease_expired(
                self.clock, host, boot_id, owner, mono, tx.dialect.from_db_datetime(expires), now
            )
            for _id, host, boot_id, owner, mono, expires, due in rows
        )
        if not found:  # else the session path reaps, and the next commit looks again
            self._reap_check_due = time.monotonic() + self.reap_check_seconds
        return found

    def lease_ready(self, tx: RawTransaction, slots: int, start: bool = False) -> list[Claim]:
        """Lease up to ``slots`` Ready jobs in claim order (and start them), in ``tx``: one
        UPDATE … RETURNING."""
        if self.paused():
            return []
        mono, _ = deadlines(self.clock, self.terms)
        now = self.shared_now(tx)  # the wall-clock deadline other workstations judge the lease by
        to_db = tx.dialect.to_db_datetime
        rows = tx.mappings(
            self.sql.claim_ready,
            {
                "stage_ids": tx.dialect.id_list(self.registry.ids(heavy=not self.heavy_paused())),
                "slots": slots,
                "v_state": (S.RUNNING if start else S.LEASED).value,
                "v_owner": self.clock.owner,
                "v_host": self.clock.host,
                "v_boot_id": self.clock.boot_id,
                "v_mono": mono,
                "v_expires_at": to_db(now + timedelta(seconds=self.terms.seconds)),
                "v_now": to_db(now),
            },
        )
        # RETURNING's order is arbitrary
        rows.sort(key=lambda r: (-r["priority"], str(r["created_at"]), r["id"]))
        upstream = self._claimed_upstream(tx, [r["id"] for r in rows if r["has_upstream"]])
        return [
            Claim(
                job_id=r["id"],
                stage_id=r["stage_id"],
                token=r["fencing_token"],
                owner=self.clock.owner,
                attempt=r["attempts"],
                input_digests=json.loads(r["input_digests"]),
                config=json.loads(r["config"]),
                checkpoint=json.loads(r["checkpoint"]) if r["checkpoint"] else None,
                started=start,
                upstream=upstream.get(r["id"], {}),
                idempotency_key=r["idempotency_key"],
            )
            for r in rows
        ]

    def _claimed_upstream(
        self, tx: RawTransaction, job_ids: list[str]
    ) -> dict[str, dict[str, Any]]:
        """Committed outputs of the jobs the claimed ones depend on, by claimed job, then
        upstream job id."""
        if not job_ids:
            return {}
        out: dict[str, dict[str, Any]] = {}
        rows = tx.execute(
            self.sql.upstream_outputs, {"ids": tx.dialect.id_list(job_ids)}
        ).fetchall()
        for job_id, upstream_id, body in rows:
            out.setdefault(job_id, {})[upstream_id] = json.loads(body)
        return out

    def reap(self) -> None:
        """Reap lapsed leases and wake due retries now (claim does this too, on every call)."""
        with self.store.write() as session:
            self._reap_expired(session)
            self._wake_due_retries(session)

    def lease_lapsed(self, job: Job, now: datetime | None = None) -> bool:
        """Whether ``job``'s lease no longer protects its holder (``now``: the shared wall
        clock, if read)."""
        return lease_expired(
            self.clock,
            job.lease_host,
            job.lease_boot_id,
            job.owner,
            job.lease_deadline_mono,
            job.lease_expires_at,
            now,
        )

    def _reap_expired(self, session: Session) -> None:
        tx = self.store.raw_in(session)
        now = self.shared_now(tx)
        held = tx.execute(self.sql.held_leases).fetchall()
        lapsed = [
            job_id
            for job_id, host, boot_id, owner, mono, expires in held
            if lease_expired(
                self.clock, host, boot_id, owner, mono, tx.dialect.from_db_datetime(expires), now
            )
        ]
        if not lapsed:  # the usual case: a cheap column read, no ORM objects
            return
        jobs = session.scalars(
            select(Job).where(Job.id.in_(lapsed), Job.state.in_(LEASE_HELD)).with_for_update()
        )
        for job in [j for j in jobs if self.lease_lapsed(j, now)]:
            if job.state == S.LEASED.value:  # never started: the attempt was not used
                self.move(session, job, S.READY)
                self.clear_lease(job)
                job.attempts = max(job.attempts - 1, 0)
            else:  # the worker died or stalled mid-run: the attempt it used counts
                self.schedule_retry(
                    session, job, WORKER_LOST, f"worker {job.owner} stopped renewing its lease"
                )
        session.flush()  # visible to the Core statements that follow (a due retry is woken at once)

    def _wake_due_retries(self, session: Session) -> None:
        tx = self.store.raw_in(session)
        now = tx.dialect.to_db_datetime(self.shared_now(tx))
        due_ids = [r[0] for r in tx.execute(self.sql.due_retries, {"now": now}).fetchall()]
        if not due_ids:
            return
        # locked, and read again under the lock: on PostgreSQL another worker may have woken and
        # claimed one since the read above (moving it to Ready from its stale state would hand a
        # claimed, even finished, job out again); one another worker is waking now is skipped
        due = session.scalars(
            select(Job)
            .where(Job.id.in_(due_ids), Job.state == S.RETRY_WAITING.value)
            .with_for_update(skip_locked=True)
            .execution_options(populate_existing=True)
        )
        for job in list(due):
            self.move(session, job, S.READY)
        session.flush()
