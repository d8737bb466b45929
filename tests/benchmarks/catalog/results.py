"""Results and revisions: each finished attempt's published (or degraded, or blocked) result,
and the revisions and sign-offs its reviewers recorded."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy.orm import Session

from labrig.domain.events import EventName
from labrig.domain.idempotency import canonical_json, sha256_hex
from labrig.domain.revisions import REVISABLE, SCHEMA_CORRECTIONS, Change, apply_changes
from labrig.domain.revisions import SCHEMA as REVISION_SCHEMA
from labrig.results.publish import build_document
from labrig.store.models import Job
from tests.benchmarks.catalog.jobs import Jobs
from tests.benchmarks.catalog.lab import DAY, MINUTE, REVIEWERS, S, hex64, iso, uuid4_text
from tests.benchmarks.catalog.rows import Chunk, Draft, JobRow

REVISION_REASONS = (
    "marker swap at heel strike corrected after checking the video",
    "peak speed taken from a reflection on the handrail; value from the synchronised force plate",
    "displacement re-measured against the walkway tape marks",
    "range corrected: marker 1 was occluded at the turn",
    "time to peak speed read from the frame-by-frame view",
    "value checked against the lab's manual digitisation",
)


class Results(Jobs):
    """The attempt's result and revisions (the third layer of the generator)."""

    def _result(
        self, chunk: Chunk, a: Draft, live: list[JobRow], ended: int
    ) -> tuple[str, int] | None:
        """The publisher's result for the attempt (its document made by the publisher's own
        build_document), and its reviewers' revisions; for a published result, the digest of its
        sync manifest and when it was published."""
        rng = self.rng
        document = build_document(cast(Session, self.outputs), a.id, cast("Sequence[Job]", live))
        self.outputs.bodies.clear()
        text = canonical_json(document)
        digest = sha256_hex(text)
        result_id = uuid4_text(rng)
        created = ended + rng.randrange(S // 5, 3 * S)
        chunk.add(
            "analysis_results",
            result_id,
            a.id,
            document["status"],
            document["degraded"],
            json.dumps(document["reasons"]),
            text.decode(),
            digest,
            self.t(created),
        )
        if document["status"] != "published":
            return None
        self.event(
            a,
            created,
            EventName.RESULT_PUBLISHED,
            {
                "result_id": result_id,
                "attempt_id": a.id,
                "result_digest": digest,
                "degraded": document["degraded"],
            },
        )
        if created < self.now - 2 * DAY:
            self._revisions(chunk, a, result_id, digest, created, json.loads(text)["metrics"])
        return hex64(rng), created

    def _revisions(
        self,
        chunk: Chunk,
        a: Draft,
        result_id: str,
        digest: str,
        created: int,
        metrics: list[dict[str, Any]],
    ) -> None:
        """~10 % of results revised (1-3 values), ~3 % signed off, as RevisionService records
        them: the revision, review.revised and the audit entry."""
        rng = self.rng
        changes = rng.choices((1, 2, 3), (70, 20, 10))[0] if rng.random() < 0.10 else 0
        signed = rng.random() < (0.2 if changes else 0.0112)
        base, when = result_id, created + rng.randrange(DAY, 30 * DAY)
        reviewer = rng.choice(REVIEWERS)
        for number in range(1, changes + signed + 1):
            when = min(when + rng.randrange(10 * MINUTE, 3 * DAY), self.now - MINUTE)
            revision_id = uuid4_text(rng)
            made: list[Change] = []
            extra: dict[str, Any] = {}
            if number > changes:  # the sign-off, of the effective result (effective_digest)
                meaning = rng.choice(("reviewed", "approved", "approved"))
                reason = f"signed off as {meaning}"
                effective = {"result_digest": digest, "operations": [], "metrics": metrics}
                approved = sha256_hex(canonical_json(effective))
                extra = {"sign_off": {"meaning": meaning, "approved_digest": approved}}
                # the last revision: in force (as labrig.review.reviewed.keep_sign_off writes it)
                chunk.add("result_sign_offs", result_id, a.id, meaning, number)
            else:
                reason = rng.choice(REVISION_REASONS)
                track, metric = rng.choice(metrics), rng.choice(REVISABLE)
                old = track.get(metric)
                new = round((old or 100.0) * rng.uniform(0.9, 1.1) + 0.001, 3)
                field_name = f"track:{track['track_id']}.{metric}"
                made = [Change(field_name, track["track_id"], metric, old, new)]
                metrics = apply_changes(metrics, made)
            body = {
                "schema": SCHEMA_CORRECTIONS if extra else REVISION_SCHEMA,
                "revision_id": revision_id,
                "result_id": result_id,
                "result_digest": digest,
                "base_id": base,
                "number": number,
                "reviewer": reviewer,
                "reason": reason,
                "created_at": iso(when),
                "changes": [c.to_json() for c in made],
            } | extra
            text = canonical_json(body)
            revision_digest = sha256_hex(text)
            chunk.add(
                "result_revisions",
                revision_id,
                result_id,
                number,
                base,
                reviewer,
                reason,
                text.decode(),
                revision_digest,
                self.t(when),
            )
            self.event(
                a,
                when,
                EventName.REVIEW_REVISED,
                {
                    "revision_id": revision_id,
                    "result_id": result_id,
                    "reviewer": reviewer,
                    "reason": reason,
                },
            )
            change = {
                "revision_id": revision_id,
                "number": number,
                "base_id": base,
                "revision_digest": revision_digest,
                "changes": [c.to_json() for c in made],
            } | extra
            action = "review.sign_off" if extra else "review.revise"
            self.audit(when, reviewer, action, result_id, reason, change)
            base = revision_id
