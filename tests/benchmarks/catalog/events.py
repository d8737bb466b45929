"""Events and audit entries: made as an attempt is generated, written in the order of their
times; the sync acknowledgements that make up each attempt's 30 events."""

from __future__ import annotations

import json
from typing import Any

from labrig.domain.audit import change_digest, entry_hash
from labrig.domain.events import EventName, spec_for
from labrig.domain.idempotency import canonical_json
from tests.benchmarks.catalog.lab import (
    DESTINATIONS,
    EVENTS_PER_ATTEMPT,
    HOSTS,
    MINUTE,
    S,
    iso,
    uuid7_text,
)
from tests.benchmarks.catalog.rows import Chunk, Draft, State, Timed

#: how events' payloads are stored (as labrig.events.payload_text encodes them)
_PAYLOAD = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)


class Events(State):
    """The outbox events and audit chain (the first layer of the generator)."""

    def event(self, draft: Draft, us: int, name: EventName, payload: dict[str, Any]) -> None:
        spec = spec_for(name)
        assert spec is not None
        if self.checked_events < 20_000 or self.order % 64 == 0:
            spec.validate(payload)  # raises on a payload the event catalog refuses
            self.checked_events += 1
        self.order += 1
        values = (
            uuid7_text(self.rng, us),
            name.value,
            spec.version,
            True,
            _PAYLOAD.encode(payload),
        )
        draft.events.append(Timed(us, self.order, values))

    def audit(
        self, us: int, actor: str, action: str, result_id: str, reason: str, change: dict[str, Any]
    ) -> None:
        self.order += 1
        values = (
            actor,
            self.rng.choice(HOSTS),
            action,
            "result",
            result_id,
            reason,
            canonical_json(change).decode(),
        )
        self.audit_later.append(Timed(us, self.order, values))

    def flush_timed(self, chunk: Chunk, until: int | None) -> None:
        """Write the events and audit entries older than ``until`` (None: all) in time order; keep
        the rest for a later chunk, so the outbox's order is the order of the events' times."""
        for later, write in (
            (self.events_later, self._write_event),
            (self.audit_later, self._write_audit),
        ):
            later.sort(key=lambda e: (e.us, e.order))
            cut = len(later)
            if until is not None:
                cut = next((i for i, e in enumerate(later) if e.us >= until), cut)
            for item in later[:cut]:
                write(chunk, item)
            del later[:cut]

    def _write_event(self, chunk: Chunk, e: Timed) -> None:
        chunk.add("outbox_events", *e.values, self.t(e.us))

    def _write_audit(self, chunk: Chunk, e: Timed) -> None:
        """The next link of the audit chain (as labrig.events.record_audit writes it)."""
        actor, host, action, object_type, object_id, reason, body = e.values
        seq, prev = self.audit_head
        content = {
            "seq": seq + 1,
            "recorded_at": iso(e.us),
            "actor": actor,
            "host": host,
            "action": action,
            "object_type": object_type,
            "object_id": object_id,
            "reason": reason,
            "change": body,
            "change_digest": change_digest(body),
        }
        digest = entry_hash(prev, content)
        chunk.add("audit_entries", *content.values(), prev, digest)
        self.audit_head = (seq + 1, digest)

    def _acks(self, a: Draft, published: tuple[str, int] | None) -> None:
        """sync.object.acknowledged for the attempt's objects (its captures' manifests, media and
        timestamps, then its result's manifest) at each destination, as many as make 30 events."""
        rng = self.rng
        objects = [
            (sha, kind, c.committed)
            for c in a.captures
            for sha, kind in (
                (c.manifest, "manifest"),
                (self.media_sha, "blob"),
                (self.stamps_sha, "blob"),
            )
        ]
        if published:
            objects.append((published[0], "manifest", published[1]))
        wanted = [(d, o) for d in DESTINATIONS for o in objects][
            : EVENTS_PER_ATTEMPT - len(a.events)
        ]
        delays = {d: rng.randrange(2 * MINUTE, 40 * MINUTE) for d in DESTINATIONS}
        for destination, (sha, kind, made) in wanted:
            when = min(made + delays[destination] + rng.randrange(S), self.now - S)
            self.event(
                a,
                when,
                EventName.SYNC_ACKNOWLEDGED,
                {"object_sha256": sha, "object_kind": kind, "destination": destination},
            )
