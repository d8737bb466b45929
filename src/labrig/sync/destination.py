"""Where sync copies objects: the :class:`Destination` protocol and its folder implementation.

A destination holds objects by content (``objects/<aa>/<sha256><ext>``) and one record per
sync batch (``batches/…json``). A folder destination (a local disk or a mounted network share)
is recognised by its marker file, ``.labrig-destination.json``, written when an admin
configures it: without the marker (the share is not mounted, the folder was removed or
replaced) it is *unavailable*, and sync writes nothing there rather than filling the empty
mount point on the local disk.

Copies are durable before they count: written under a temporary name, fsynced, renamed, the
directory fsynced. The caller then asks the destination for the digest of what it now holds
(:meth:`Destination.digest`, read back from the destination) and acknowledges the object only when
it matches. Other kinds of destination (an object store, a second share with different rules), and
test doubles that corrupt or lose copies, implement the same protocol and are passed to the
composition root (``bootstrap(sync_destination=…)``).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from labrig.errors import LabrigError
from labrig.fsutil import CHUNK, fsync_dir, sha256_file, write_atomic
from labrig.tasks import UNTRACKED, Task

MARKER_NAME = ".labrig-destination.json"
MARKER_SCHEMA = "labrig.sync.destination/1"
OBJECTS, BATCHES = "objects", "batches"


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class DestinationUnavailableError(LabrigError):
    """The destination cannot be reached or is not the archive that was configured;
    nothing was written."""

    code = "LABRIG_SYNC_DESTINATION_UNAVAILABLE"


@dataclass(frozen=True)
class DestinationConfig:
    """The destination in force, as stored in the catalog."""

    destination_id: str  # the archive's id, also in its marker file
    name: str  # what events and status call it
    kind: str  # folder
    location: str  # the folder (a network share path)
    configured_by: str
    configured_at: str

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


class Destination(Protocol):
    """A sync destination. Implementations must make :meth:`put` durable before returning, and must
    read :meth:`digest` back from the destination itself (never from what they meant to write)."""

    config: DestinationConfig

    def check(self) -> None:
        """Raise :class:`DestinationUnavailableError` unless the destination is reachable and is the
        archive of :attr:`config`."""

    def put(self, relpath: str, source: Readable, size: int, task: Task = UNTRACKED) -> None:
        """Store ``size`` bytes read from ``source`` at ``relpath``, replacing whatever was there,
        durably. Report the fraction copied to ``task``; when it is cancelled, stop and leave
        nothing at ``relpath`` (``task.check_cancelled()`` raises). Whatever it raises — a cancel,
        an ``OSError`` of its own (no room), or an error of ``source``, which refuses bytes that are
        not the object's — it leaves nothing new at ``relpath`` and none of its partial copy."""

    def digest(self, relpath: str) -> str | None:
        """SHA-256 of what the destination now holds at ``relpath`` (None when it
        holds nothing there)."""


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker of an archive folder, or None when there is none
    (or it is not a Labrig marker)."""
    path = folder / MARKER_NAME
    try:
        data = json.loads(path.read_bytes()) if path.is_file() else None
    except (OSError, ValueError):
        return None
    ok = (
        isinstance(data, dict)
        and data.get("schema") == MARKER_SCHEMA
        and isinstance(data.get("destination_id"), str)
    )
    return data if ok else None


class FolderDestination:
    """A folder (local or a mounted share) holding objects by content. Thread-safe: it keeps no
    state but its configuration; temporary names are unique, so concurrent writers (two
    workstations) never collide."""

    def __init__(self, config: DestinationConfig, chunk: int = CHUNK) -> None:
        self.config = config
        self.root = Path(config.location)
        self.chunk = chunk

    @staticmethod
    def prepare(folder: Path, destination_id: str, name: str, by: str) -> None:
        """Make ``folder`` an archive: its marker (kept if it is already one) and its
        two sub-folders."""
        if read_marker(folder) is None:
            write_atomic(
                folder / MARKER_NAME,
                json.dumps(
                    {
                        "schema": MARKER_SCHEMA,
                        "destination_id": destination_id,
                        "name": name,
                        "created_by": by,
                    },
                    indent=1,
                    sort_keys=True,
                ).encode(),
            )
        for sub in (OBJECTS, BATCHES):
            (folder / sub).mkdir(exist_ok=True)

    def check(self) -> None:
        marker = read_marker(self.root)
        if marker is None:
            raise DestinationUnavailableError(
                f"the sync destination '{self.config.name}' ({self.root}) is not available: its "
                f"folder or its {MARKER_NAME} file is missing (is the network share mounted?). "
                "Nothing was copied; sync resumes when it is back, or an admin configures "
                "another: labrig sync configure --to DIR"
            )
        if marker["destination_id"] != self.config.destination_id:
            raise DestinationUnavailableError(
                f"{self.root} now holds another archive (id {marker['destination_id']}, not "
                f"{self.config.destination_id}); nothing was copied. An admin re-configures sync "
                f"to use it: labrig sync configure --to {self.root}"
            )

    def _path(self, relpath: str) -> Path:
        return self.root.joinpath(*relpath.split("/"))

    def put(self, relpath: str, source: Readable, size: int, task: Task = UNTRACKED) -> None:
        target = self._path(relpath)
        # never its parents: a missing archive is not silently re-created
        target.parent.mkdir(exist_ok=True)
        temp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.part")
        try:
            self._copy(source, temp, size, task)
            os.replace(temp, target)
            fsync_dir(target.parent)
        except BaseException:
            # the folder may be gone (unmounted): its temp file goes later
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        self._remove_stale_parts(target)

    @staticmethod
    def _remove_stale_parts(target: Path) -> None:
        """Temp files of earlier, interrupted copies of this object (a share that vanished
        mid-copy, a killed process): the object is now whole, so they are litter. A concurrent copy
        of the same object that loses its temp file fails its rename, and the next batch finds the
        object already there."""
        for stale in target.parent.glob(f".{glob.escape(target.name)}.*.part"):
            with contextlib.suppress(OSError):
                stale.unlink()

    def _copy(self, source: Readable, temp: Path, size: int, task: Task) -> None:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        with os.fdopen(fd, "wb") as out:
            done = 0
            while chunk := source.read(self.chunk):
                task.check_cancelled()
                out.write(chunk)
                done += len(chunk)
                out.flush()  # what the progress says is copied is in the file
                task.progress(done / size if size else 1.0)
            out.flush()
            os.fsync(out.fileno())

    def digest(self, relpath: str) -> str | None:
        path = self._path(relpath)
        try:
            return sha256_file(path)[0] if path.is_file() else None
        except FileNotFoundError:
            return None
