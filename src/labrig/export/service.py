"""Exporting published results into a verifiable bundle (``labrig export``, and the
GUI's export dialog).

Refusals come first, before anything is written: an unknown or ambiguous id, a result that is not
published, nothing to export, a target that is not a folder, a user whose role does not allow it.
Then one read transaction takes the snapshot (results, revisions, captures, audit chain head), and
the bundle is written outside it. See docs/export-sync.md for the layout and the schemas.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select

import labrig
from labrig.access import AccessControl
from labrig.domain.audit import Actor, ChainHead
from labrig.domain.roles import Action
from labrig.errors import LabrigError, UsageError
from labrig.events import chain_head
from labrig.export import documents as docs
from labrig.export.bundle import BundleWriter
from labrig.export.interchange import (
    frames_to_write,
    nwb_subject,
    parse_formats,
    refuse_uncalibrated,
    unavailable,
    write_formats,
)
from labrig.export.paths import safe_component
from labrig.export.result_tables import result_tables
from labrig.export.snapshot import CaptureFiles, ResultSnapshot, select_results, snapshot
from labrig.export.tables import ResultTables
from labrig.export.verify import EXPORT_SCHEMA
from labrig.review.player import ResultMedia, result_media
from labrig.review.revisions import RevisionService
from labrig.store import BlobStore, Store, utcnow
from labrig.store.models import Meta
from labrig.tasks import UNTRACKED, Task


class ExportTargetError(LabrigError):
    code = "LABRIG_EXPORT_TARGET"


class ExportFailedError(LabrigError):
    code = "LABRIG_EXPORT_FAILED"


@dataclass(frozen=True)
class ExportReport:
    bundle: Path
    results: list[dict[str, Any]]
    files: int
    bytes: int
    audit_chain_head: ChainHead

    def to_json(self) -> dict[str, Any]:
        return {
            "bundle": str(self.bundle),
            "results": self.results,
            "files": self.files,
            "bytes": self.bytes,
            "audit_chain_head": self.audit_chain_head.to_json(),
        }


@dataclass(frozen=True)
class _Formats:
    """What the interchange formats are written from for one result, read before anything is
    written (None: no format asked for, or no tracked markers), and the formats left out."""

    tables: ResultTables | None
    media: ResultMedia | None
    skipped: dict[str, str]


@dataclass(frozen=True)
class _Snapshot:
    actor: Actor
    head: ChainHead
    store_id: str
    results: list[ResultSnapshot]
    formats: tuple[str, ...]
    sources: list[_Formats]


def _prepare_target(target: Path) -> Path:
    target = Path(target).expanduser().absolute()
    if target.exists() and not target.is_dir():
        raise ExportTargetError(f"{target} is a file, not a folder; give the folder to export into")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportTargetError(
            f"cannot create {target} ({exc.strerror}); choose a folder you can write to"
        ) from exc
    return target


class ExportService:
    """Exports published results. Thread-safe: each call opens its own read session."""

    def __init__(self, store: Store, access: AccessControl) -> None:
        self.store, self.access = store, access

    def export(
        self,
        refs: Sequence[str],
        target: Path,
        *,
        everything: bool = False,
        media: bool = False,
        formats: str | Sequence[str] | None = None,
        subject: Mapping[str, str] | None = None,
        task: Task = UNTRACKED,
    ) -> ExportReport:
        """Write one bundle into ``target`` for the results ``refs`` (ids or prefixes), or
        ``everything`` published; ``media`` adds each capture's committed manifest,
        segments and timestamps; ``formats`` the interchange formats
        (:mod:`labrig.export.interchange`; None: its defaults); ``subject`` the species and age
        the NWB files carry (:func:`~labrig.export.interchange.nwb_subject`).

        Progress goes to ``task`` after each result and each media file; a cancel of it (or any
        failure) removes the unfinished bundle, so nothing half-written is left in ``target``."""
        if bool(refs) == everything:
            raise UsageError(
                "name the results to export (RESULT…), or give --all for every published result"
            )
        wanted = parse_formats(formats)
        subject = nwb_subject((subject or {}).get("species"), (subject or {}).get("age"))
        snap = self._read(refs, everything, wanted, task)
        parent = _prepare_target(target)
        name = f"labrig-export-{utcnow().strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"
        try:
            writer = BundleWriter(parent, name)
        except OSError as exc:
            raise ExportTargetError(
                f"cannot write into {parent} ({exc.strerror}); choose a folder you can write to"
            ) from exc
        try:
            return self._write(writer, snap, media, subject, task)
        except OSError as exc:
            writer.abort()
            raise ExportFailedError(
                f"the export into {parent} failed ({exc}); nothing was exported. Check the "
                "free space and the folder, then export again"
            ) from exc
        except BaseException:
            writer.abort()
            raise

    def _read(
        self, refs: Sequence[str], everything: bool, formats: tuple[str, ...], task: Task
    ) -> _Snapshot:
        blobs = BlobStore(self.store.media_dir)
        with self.store.read() as session:
            actor = self.access.authorize(session, Action.EXPORT)
            rows = select_results(session, refs, everything)
            results = [snapshot(session, row, self.store, blobs) for row in rows]
            head = chain_head(session)
            store_id = session.scalar(select(Meta.value).where(Meta.key == "store_id")) or ""
        sources = []
        for n, result in enumerate(results):
            task.check_cancelled()
            task.progress(0.0, f"reading result {n + 1} of {len(results)}")
            sources.append(self._sources(result, formats))
        return _Snapshot(actor, head, store_id, results, formats, sources)

    def _sources(self, result: ResultSnapshot, formats: tuple[str, ...]) -> _Formats:
        """What ``result``'s formats are written from; refused here, before anything is written,
        when one cannot hold it."""
        if not formats or result.tracked is None:
            return _Formats(None, None, unavailable(None, formats))
        media = result_media(
            self.store, RevisionService(self.store, self.access), result.reviewed.result_id
        )
        tables = result_tables(self.store, result, media, docs.format_provenance(result))
        refuse_uncalibrated(result.reviewed.result_id, tables, formats)
        return _Formats(tables, media, unavailable(tables, formats))

    def _write(
        self,
        writer: BundleWriter,
        snap: _Snapshot,
        media: bool,
        subject: Mapping[str, str],
        task: Task,
    ) -> ExportReport:
        now = utcnow()
        exported = {
            "at": now.isoformat(),
            "by": snap.actor.user,
            "host": snap.actor.host,
            "labrig_version": labrig.__version__,
            "store_id": snap.store_id,
            "audit_chain_head": snap.head.to_json(),
        }
        listed: list[dict[str, Any]] = []
        folders: set[str] = set()
        media_files = [c for r in snap.results for c in r.captures] if media else []
        steps = _Steps(
            task,
            len(snap.results) * (1 + len(snap.formats))
            + sum(frames_to_write(s.media, snap.formats) for s in snap.sources)
            + sum(len(c.files) for c in media_files),
        )
        for result, source in zip(snap.results, snap.sources, strict=True):
            steps.next(f"writing result {len(listed) + 1} of {len(snap.results)}")
            folder = _unique(_folder_name(result), folders)
            self._write_result(writer, f"results/{folder}", result, exported)
            written: dict[str, list[str]] = {}
            if source.tables is not None and source.media is not None:
                written = write_formats(
                    writer,
                    f"results/{folder}",
                    source.tables,
                    source.media,
                    snap.formats,
                    now,
                    steps.advance,
                    subject,
                )
            listed.append(
                {
                    "result_id": result.reviewed.result_id,
                    "attempt_id": result.reviewed.attempt_id,
                    "folder": f"results/{folder}",
                    "degraded": result.reviewed.degraded,
                    "automatic_digest": result.reviewed.automatic_digest,
                    "revisions": len(result.revisions),
                    "superseded_by": result.reviewed.superseded_by,
                    "effective_series": f"results/{folder}/{docs.EFFECTIVE_SERIES_NAME}"
                    if result.effective is not None
                    else None,
                    "sign_off": docs.sign_off_line(result),
                    "formats": written,
                    "formats_skipped": source.skipped,
                }
            )
        captures: dict[str, str] = {}
        if media:
            captures = self._write_media(writer, media_files, steps)
        steps.next("writing the manifest and SHA256SUMS")
        manifest = {
            "schema": EXPORT_SCHEMA,
            "bundle": writer.final.name,
            "exported": exported,
            "audit_chain_head": snap.head.to_json(),
            "media": media,
            "formats": list(snap.formats),
            "results": listed,
            "media_folders": captures,
            "files": [e.to_json() for e in sorted(writer.entries.values(), key=lambda e: e.path)],
        }
        bundle = writer.finish(docs.pretty_json(manifest))
        entries = list(writer.entries.values())
        return ExportReport(
            bundle, listed, len(entries) + 2, sum(e.bytes for e in entries), snap.head
        )

    @staticmethod
    def _write_result(
        writer: BundleWriter, folder: str, result: ResultSnapshot, exported: dict[str, Any]
    ) -> None:
        document = docs.result_document(result)
        writer.write(f"{folder}/result.json", docs.pretty_json(document))
        writer.write(f"{folder}/metrics.csv", docs.metrics_csv(document))
        writer.write(f"{folder}/series.csv", docs.series_csv(result.automatic))
        if result.effective is not None:  # beside the automatic series, never instead of it
            writer.write(
                f"{folder}/{docs.EFFECTIVE_SERIES_NAME}",
                docs.effective_series_csv(result.effective),
            )
        writer.write(
            f"{folder}/provenance.json", docs.pretty_json(docs.provenance(result, exported))
        )
        # its SHA-256 is the digest
        writer.write(f"{folder}/automatic.json", result.automatic_text.encode())
        for revision in result.revisions:
            writer.write(
                f"{folder}/revisions/revision-{revision.number:03d}.json", revision.text.encode()
            )
        for name, png in docs.plots(result.automatic).items():
            writer.write(f"{folder}/{name}", png)

    def _write_media(
        self, writer: BundleWriter, captures: list[CaptureFiles], steps: _Steps
    ) -> dict[str, str]:
        blobs, folders, written = BlobStore(self.store.media_dir), set[str](), {}
        for capture in captures:
            if capture.capture_id in written:
                continue
            folder = _unique(safe_component(capture.capture_id, "capture"), folders)
            names: set[str] = set()
            for f in capture.files:
                steps.next(f"copying {f.name} of capture {capture.capture_id[:8]}")
                name = _unique(safe_component(f.name, f"{f.kind}{f.ext}"), names)
                writer.copy_verified(
                    f"media/{folder}/{name}", blobs.path(f.sha256, f.ext), f.sha256
                )
            written[capture.capture_id] = f"media/{folder}"
        return written


class _Steps:
    """An export's units of work (results, media files), counted for its task; each begins
    with a cancel check."""

    def __init__(self, task: Task, total: int) -> None:
        self.task, self.total, self.done = task, max(total, 1), 0

    def next(self, message: str) -> None:
        self.advance(1, message)

    def advance(self, units: int, message: str) -> None:
        """``units`` more units of work begin (a video's frames count one each)."""
        self.task.check_cancelled()
        self.task.progress(min(self.done / self.total, 1.0), message)
        self.done += units


def _folder_name(result: ResultSnapshot) -> str:
    """``<subject>_<protocol>_attempt-<n>_<result id>``, each part sanitised (ids, codes and names
    may be hostile)."""
    parts = [
        safe_component(result.session.get("subject_code", ""), "subject"),
        safe_component(result.session.get("protocol", ""), "protocol"),
        f"attempt-{int(result.attempt_number)}",
        safe_component(result.reviewed.result_id, "result"),
    ]
    return safe_component("_".join(parts), "result")


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name-2``, ``name-3`` … when two sanitised names collide."""
    candidate, n = name, 1
    while candidate.lower() in taken:  # case-insensitive: Windows and macOS folders are
        n += 1
        candidate = safe_component(f"{name[:70]}-{n}")
    taken.add(candidate.lower())
    return candidate
