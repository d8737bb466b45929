"""Importing a rig's videos recorded by separate devices (action cameras, phones): each file
committed as one import is, the offsets between them estimated after the fact
(:mod:`labrig.capture.posthoc_sync`), and one attempt of them all, with the offsets and their
confidence stored and handed to the rig.sync stage."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.orm import Session

from labrig.capture import create_attempt, import_media, open_video
from labrig.capture.commit import CommitResult
from labrig.capture.posthoc_sync import PostHocSync, SyncMethod, estimate_offsets
from labrig.capture.rig_sync import SyncFigures, capture_stream, measure_sync
from labrig.capture.rigs import Rig
from labrig.errors import UsageError
from labrig.jobs import JobQueue
from labrig.pipeline.rig_attempts import rig_pipeline
from labrig.store import utcnow
from labrig.store.models import RigRecording


@dataclass(frozen=True)
class RigImport:
    attempt_id: str
    captures: list[tuple[str, CommitResult]]  # (place, commit)
    posthoc: PostHocSync
    sync: SyncFigures


def import_rig(
    queue: JobQueue,
    rig: Rig,
    files: Sequence[tuple[str, Path]],
    method: SyncMethod,
    session_id: str,
) -> RigImport:
    """Import ``files`` ((place, video) for each of ``rig``'s places, two or more) as one
    attempt of the session, synchronised by ``method``. The offsets are estimated before anything
    is stored, so a video the method cannot use is refused with nothing imported."""
    places = [d.place for d in rig.devices]
    unknown = [p for p, _ in files if p not in places]
    if unknown or len(files) < 2 or len({p for p, _ in files}) != len(files):
        raise UsageError(
            f"give two or more of the rig '{rig.name}''s places, each once, as --camera "
            f"PLACE=FILE (its places: {', '.join(places)})"
            + (f"; '{unknown[0]}' is not one of them" if unknown else "")
        )
    ordered = sorted(files, key=lambda f: places.index(f[0]))
    posthoc = estimate_offsets([(p, f, _fps(f)) for p, f in ordered], method)
    by_place = {d.place: d for d in rig.devices}
    commits = []
    for place, path in ordered:
        device = by_place[place]
        commits.append(
            (
                place,
                import_media(
                    queue.store,
                    path,
                    session_id=session_id,
                    device={
                        "device_id": device.device_id,
                        "kind": "imported",
                        "name": f"{place} of the rig {rig.name}",
                        "source_name": path.name,
                    },
                ),
            )
        )
    offsets_ms = [c.offset_s * 1e3 for c in posthoc.cameras]
    sync = measure_sync(
        [
            capture_stream(queue.store, commit.manifest_sha256, place, offset)
            for (place, commit), offset in zip(commits, offsets_ms, strict=True)
        ]
    )
    capture_ids = [c.capture_id for _, c in commits]
    config = {"offsets_ms": offsets_ms, "trusted": posthoc.trustworthy}
    note = f"Imported from {len(commits)} separate devices; {posthoc.summary()}."

    def within(db: Session, attempt_id: str) -> None:
        db.add(
            RigRecording(
                id=str(uuid.uuid4()),
                rig_name=rig.name,
                session_id=session_id,
                state="imported",
                started_at=utcnow(),
                devices=json.dumps(
                    [
                        {"place": p, "device_id": by_place[p].device_id, "capture_id": c.capture_id}
                        for p, c in commits
                    ]
                ),
                sync=json.dumps(sync.to_json() | {"posthoc": posthoc.to_json()}),
                attempt_id=attempt_id,
            )
        )

    attempt_id = create_attempt(
        queue,
        session_id,
        capture_ids,
        rig_pipeline(queue, capture_ids, config, rig),
        note,
        within,
    )
    return RigImport(attempt_id, commits, posthoc, sync)


def _fps(path: Path) -> float:
    import cv2

    cap = open_video(path)  # refuses a name or file the decoder would not survive
    try:
        fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
    finally:
        cap.release()
    if not 0 < fps < 1000:
        raise UsageError(f"{path.name} does not say its frame rate; it cannot be synchronised")
    return fps
