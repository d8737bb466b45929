"""Damage found in the catalog's pages, remembered beside it in ``labrig.db.damaged``.

SQLite's integrity check (:class:`~labrig.store.dialects.sqlite.PageCheck`) runs in the background
of the window and of ``labrig worker``, and in ``labrig doctor``. Damage it finds is written to this
marker in the data folder, so that every later process refuses to write to that catalog
(:class:`~labrig.errors.CatalogDamagedError`) until it is repaired and ``labrig doctor`` passes,
which removes the marker. Reading goes on: the technician can still list, verify and export.

The marker names the damaged catalog's ``store_id``: a catalog that replaced it (rebuilt by
``labrig recover --adopt``) is not refused; the same catalog restored from a backup is, until
``labrig doctor`` has checked it. Threading: :class:`MarkerWatch` may be asked from any thread.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from labrig.errors import CatalogDamagedError, LabrigError, StoreUnwritableError
from labrig.fsutil import open_regular, shown, write_atomic
from labrig.store import paths
from labrig.store.types import utcnow

MARKER_NAME = "labrig.db.damaged"
MARKER_SCHEMA = "labrig.catalog-damage/1"
#: how often a store looks for a marker another process wrote (a stat per write would cost a
#: seventh of an empty write transaction)
RECHECK_SECONDS = 1.0
REPAIR = (
    "Stop Labrig on every workstation using this data folder. Then restore labrig.db from a "
    "backup; or, when 'labrig verify' finds the media whole, move labrig.db (with any "
    "labrig.db-wal and labrig.db-shm) out of the data folder and run 'labrig recover --adopt', "
    "which rebuilds the catalog of captures from their committed manifests. Then run "
    "'labrig doctor': once SQLite's integrity check passes, writing is allowed again"
)


@dataclass(frozen=True)
class DamageV1:
    """What ``labrig.db.damaged`` says (schema ``labrig.catalog-damage/1``, a JSON object)."""

    found_at: str  # when the check found the damage (ISO 8601, UTC); "" if the marker is unreadable
    found_by: str  # what ran the check: "labrig doctor", "labrig worker" or "the window"
    database: str  # the catalog file that was checked
    store_id: str | None  # the damaged catalog's store id (labrig_meta); None: refuse any catalog
    findings: tuple[str, ...]  # SQLite's words for each problem, at most PAGE_CHECK_LIMIT
    check: str = "integrity_check"  # the SQLite check that found it

    def to_bytes(self) -> bytes:
        body = {"schema": MARKER_SCHEMA, **asdict(self), "findings": list(self.findings)}
        return json.dumps(body, indent=2).encode() + b"\n"

    @classmethod
    def from_bytes(cls, data: bytes, path: Path) -> DamageV1:
        """The marker's contents; one that cannot be read still refuses (its presence is what
        counts), with words saying so."""
        try:
            body = json.loads(data)
            if body.pop("schema") != MARKER_SCHEMA:
                raise ValueError("unknown schema")
            return cls(**{**body, "findings": tuple(str(f) for f in body["findings"])})
        except (ValueError, TypeError, KeyError, AttributeError):
            return _unreadable(path)

    def refusal(self) -> CatalogDamagedError:
        more = f" (and {len(self.findings) - 1} more)" if len(self.findings) > 1 else ""
        first = self.findings[0] if self.findings else "damage"
        when = f" by {self.found_by} at {self.found_at}" if self.found_at else ""
        return CatalogDamagedError(
            f"the catalog {self.database} is damaged: SQLite's {self.check}{when} found "
            f"'{first}'{more}, and Labrig stopped writing to it; nothing was written. {REPAIR}"
        )


def _unreadable(path: Path) -> DamageV1:
    said = f"{shown(path)} records damage but cannot be read"
    return DamageV1("", "", str(path.parent / paths.DB_FILENAME), None, (said,))


def marker_path(root: Path) -> Path:
    return root / MARKER_NAME


def read_marker(root: Path) -> DamageV1 | None:
    """The damage recorded in the data folder ``root``, or None."""
    path = marker_path(root)
    if not os.path.lexists(path):
        return None
    try:
        with open_regular(path) as fh:
            return DamageV1.from_bytes(fh.read(), path)
    except FileNotFoundError:  # removed meanwhile (labrig doctor passed)
        return None
    except (OSError, LabrigError):  # a folder, a FIFO, unreadable: still damage recorded
        return _unreadable(path)


def remember(
    root: Path, *, database: Path, store_id: str | None, findings: list[str], found_by: str
) -> DamageV1:
    """Record damage found in the catalog ``database`` of ``root`` (atomically: a crash leaves
    the marker whole or absent)."""
    record = DamageV1(
        utcnow().isoformat(timespec="seconds"), found_by, str(database), store_id, tuple(findings)
    )
    write_atomic(marker_path(root), record.to_bytes())
    return record


def forget(root: Path) -> DamageV1 | None:
    """Remove the marker (the catalog passed the check); what it had recorded, if anything."""
    path, record = marker_path(root), read_marker(root)
    try:
        if record is not None and path.is_dir():
            path.rmdir()  # an empty folder stood for the marker; one that holds anything stays
        elif record is not None:
            path.unlink(missing_ok=True)
    except OSError as exc:
        raise StoreUnwritableError(
            f"{shown(path)} could not be removed ({exc.strerror}): remove it by hand, since the "
            "catalog passed its check"
        ) from exc
    return record


class MarkerWatch:
    """Whether damage is recorded for a store's catalog, looked up at most once per
    :data:`RECHECK_SECONDS` (at once after :meth:`expire`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._record: DamageV1 | None = None
        self._next = 0.0

    def refusal(self, store_id: str | None) -> CatalogDamagedError | None:
        """The refusal of a write to the catalog ``store_id`` (None while the catalog is being
        opened, whose meta rows are written then: never refused)."""
        with self._lock:
            if (now := time.monotonic()) >= self._next:
                self._record, self._next = read_marker(self.root), now + RECHECK_SECONDS
            record = self._record
        if record is None or store_id is None:
            return None
        if record.store_id is not None and record.store_id != store_id:
            return None  # recorded for a catalog since replaced
        return record.refusal()

    def expire(self) -> None:
        with self._lock:
            self._next = 0.0
