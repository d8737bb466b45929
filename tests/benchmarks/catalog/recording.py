"""Recordings: each attempt's captures (one per camera of its rig), its rig recording and sync
figures, and the order its parts are generated in."""

from __future__ import annotations

import json
from typing import Any

from labrig.domain.events import EventName
from tests.benchmarks.catalog.lab import EVENTS_PER_ATTEMPT, PLACES, STAGES, S, hex64, uuid4_text
from tests.benchmarks.catalog.results import Results
from tests.benchmarks.catalog.rows import CaptureRow, Chunk, Draft

INTERRUPTED = "Interrupted: the window was closed while recording."


class Recording(Results):
    """One attempt, all its parts (the fourth layer of the generator)."""

    def attempt(self, chunk: Chunk, a: Draft) -> None:
        """An attempt: its captures, the attempt, its rig recording, its jobs, its result and
        revisions, and its 30 events."""
        self._captures(chunk, a)
        note = INTERRUPTED if self.rng.random() < 0.004 else None
        chunk.add("attempts", a.id, a.plan.id, a.number, self.t(a.created), note, "pending")
        for position, capture in enumerate(a.captures):
            chunk.add("attempt_captures", a.id, capture.id, position)
        self.event(
            a,
            a.created,
            EventName.ATTEMPT_CREATED,
            {
                "attempt_id": a.id,
                "session_id": a.plan.id,
                "capture_ids": [c.id for c in a.captures],
            },
        )
        a.sync = self._sync(a)
        devices = [
            {
                "kind": "camera",
                "place": c.place,
                "device_id": c.device.device_id,
                "mode": c.device.label(),
                "capture_id": c.id,
            }
            for c in a.captures
        ]
        chunk.add(
            "rig_recordings",
            uuid4_text(self.rng),
            a.plan.rig.name,
            a.plan.id,
            "saved",
            self.t(min(c.started for c in a.captures)),
            json.dumps(devices),
            json.dumps(a.sync),
            a.id,
        )
        live, ended = self._jobs(chunk, a)
        published = self._result(chunk, a, live, ended) if a.outcome != "pending" else None
        self._acks(a, published)
        assert len(a.events) == EVENTS_PER_ATTEMPT, (len(a.events), a.outcome)
        self.events_later.extend(a.events)

    def _captures(self, chunk: Chunk, a: Draft) -> None:
        """One committed capture per camera of the rig: its row, segment, manifest blob, events."""
        rng = self.rng
        seconds = rng.uniform(3.0, 12.0)
        # frames are dropped only on the camera that degrades a degraded attempt's media.qc
        lossy = rng.randrange(3) if a.outcome == "degraded" and STAGES[a.at] == "media.qc" else -1
        for position, (device, place) in enumerate(zip(a.plan.rig.devices, PLACES, strict=True)):
            expected = int(seconds * device.fps)
            dropped = 0
            if position == lossy:
                dropped = rng.randint(int(expected * 0.01) + 1, int(expected * 0.04) + 2)
            started = a.created - int((seconds + 1.5) * S) - rng.randrange(20_000)
            c = CaptureRow(
                uuid4_text(rng),
                hex64(rng),
                device,
                place,
                expected - dropped,
                dropped,
                started,
                a.created - S + position * 1000,
            )
            a.captures.append(c)
            chunk.add(
                "captures",
                c.id,
                a.plan.id,
                device.device_id,
                "recorded",
                "committed",
                json.dumps(device.mode()),
                json.dumps(device.verification()),
                self.t(c.started),
                self.t(c.committed),
                c.frames,
                c.dropped,
                c.manifest,
                None,
                None,
                None,
                "attempt",
            )
            chunk.add(
                "blobs",
                c.manifest,
                ".json",
                rng.randint(1100, 1500),
                "manifest",
                self.t(c.committed),
                None,
            )
            mono = rng.randrange(10**12, 10**15)  # the host's monotonic clock, ns
            chunk.add(
                "capture_segments",
                c.id,
                0,
                self.media_sha,
                self.stamps_sha,
                c.frames,
                mono,
                mono + int((c.frames - 1) * 1e9 / device.fps),
            )
            self.event(
                a,
                c.started,
                EventName.CAPTURE_STARTED,
                {
                    "capture_id": c.id,
                    "session_id": a.plan.id,
                    "device_id": device.device_id,
                    "manifest_path": f"{self.store.root}/captures/provisional/{c.id}/manifest.json",
                },
            )
        for c in a.captures:
            self.event(
                a,
                c.committed,
                EventName.CAPTURE_COMMITTED,
                {
                    "capture_id": c.id,
                    "state": "committed",
                    "manifest_sha256": c.manifest,
                    "segments": 1,
                    "frame_count": c.frames,
                    "dropped_frames": c.dropped,
                },
            )

    def _sync(self, a: Draft) -> dict[str, Any]:
        """The rig's sync figures (rig.sync's output, and the rig recording's), within the gate
        unless the attempt is degraded or blocked at rig.sync."""
        rng = self.rng
        interval = round(1000.0 / a.captures[0].device.fps, 6)
        instants = max(c.frames + c.dropped for c in a.captures)
        p99 = round(rng.uniform(0.4, 3.5), 3)
        at_sync = STAGES[a.at] == "rig.sync"
        if a.outcome == "degraded" and at_sync:
            p99 = round(interval * rng.uniform(0.3, 0.6), 3)
        unmatched = {c.place: c.dropped for c in a.captures}
        sets = instants - max(unmatched.values())
        if a.outcome == "blocked" and at_sync:
            sets = int(instants * rng.uniform(0.1, 0.45))
        return {
            "instruments": {},
            "cameras": list(PLACES),
            "frame_interval_ms": interval,
            "instants": instants,
            "frame_sets": sets,
            "spread_ms": {"p50": round(p99 * 0.3, 3), "p99": p99, "max": round(p99 * 1.4, 3)},
            "unmatched": unmatched,
            "drift_ppm": {p: round(rng.uniform(-40, 40), 2) for p in PLACES[1:]},
        }
