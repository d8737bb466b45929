"""Writing a bundle: a hidden temp folder inside the target, renamed to its final name
only when complete.

Every file is written exclusively (never over another), fsynced and hashed as it is written; media
are hashed while they are copied and refused if they no longer match the digest they are stored
under. The bundle ends with ``manifest.json`` (every other file with its SHA-256 and size) and
``SHA256SUMS`` (every file, ``manifest.json`` included, in the format ``sha256sum -c`` reads). Only
then is the folder fsynced and renamed: a crash or a full disk leaves a ``.…partial`` folder, never
a bundle that looks complete.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from labrig.errors import LabrigError
from labrig.export.paths import UnsafeTargetError, check_bundle_path, inside
from labrig.fsutil import CHUNK, fsync_dir, open_regular
from labrig.store import BlobMismatchError

SUMS_NAME = "SHA256SUMS"
MANIFEST_NAME = "manifest.json"
PARTIAL_SUFFIX = ".partial"


class BlobMissingError(LabrigError):
    code = "LABRIG_BLOB_MISSING"


@dataclass(frozen=True)
class FileEntry:
    path: str  # relative to the bundle, "/"-separated
    sha256: str
    bytes: int

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "sha256": self.sha256, "bytes": self.bytes}


def sums_text(entries: list[FileEntry]) -> bytes:
    """``SHA256SUMS``: one ``<digest>  <path>`` line per file (text mode, two
    spaces), sorted by path.

    Paths are safe components joined by ``/`` (no backslash, no newline), so no line
    needs GNU's escaping.
    """
    return "".join(
        f"{e.sha256}  {e.path}\n" for e in sorted(entries, key=lambda e: e.path)
    ).encode()


class BundleWriter:
    """Builds one bundle in ``parent``. Not thread-safe: one writer per bundle."""

    def __init__(self, parent: Path, name: str) -> None:
        self.final = parent / name
        self.temp = parent / f".{name}{PARTIAL_SUFFIX}"
        self.temp.mkdir()
        self.entries: dict[str, FileEntry] = {}

    def _target(self, relpath: str) -> Path:
        try:
            check_bundle_path(relpath)
        except LabrigError as exc:  # what Labrig writes must pass its own reader's rules
            raise UnsafeTargetError(f"refused to write '{relpath}': {exc.message}") from exc
        if relpath in self.entries or relpath in (SUMS_NAME, MANIFEST_NAME):
            raise UnsafeTargetError(f"'{relpath}' would be written twice in one bundle")
        target = inside(self.temp, relpath)
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def write(self, relpath: str, data: bytes) -> FileEntry:
        target = self._target(relpath)
        with open(target, "xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        return self._add(FileEntry(relpath, hashlib.sha256(data).hexdigest(), len(data)))

    @contextmanager
    def produced(self, relpath: str) -> Iterator[Path]:
        """A path for a format library to write ``relpath`` into (C3D, NWB, video: libraries that
        write files, not bytes); once it has, the file is fsynced, hashed and listed."""
        target = self._target(relpath)
        yield target
        if not target.is_file():
            raise OSError(f"'{relpath}' was not written")
        digest, size = hashlib.sha256(), 0
        with open(target, "rb+") as fh:
            while chunk := fh.read(CHUNK):
                digest.update(chunk)
                size += len(chunk)
            os.fsync(fh.fileno())
        self._add(FileEntry(relpath, digest.hexdigest(), size))

    def copy_verified(self, relpath: str, source: Path, sha256: str) -> FileEntry:
        """Copy a media-store file, hashing it on the way; refused (nothing kept) if it
        no longer matches."""
        target = self._target(relpath)
        digest, size = hashlib.sha256(), 0
        try:
            src = open_regular(source)  # closed below, with the target
        except FileNotFoundError as exc:
            raise BlobMissingError(
                f"{source} is missing from the media store; run 'labrig verify', restore it "
                "from a backup, then export again. Nothing was exported"
            ) from exc
        with src, open(target, "xb") as out:
            while chunk := src.read(CHUNK):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != sha256:
            raise BlobMismatchError(
                f"{source} no longer matches its digest {sha256}; run 'labrig verify' and "
                "restore it from a backup. Nothing was exported"
            )
        return self._add(FileEntry(relpath, sha256, size))

    def _add(self, entry: FileEntry) -> FileEntry:
        self.entries[entry.path] = entry
        return entry

    def finish(self, manifest: bytes) -> Path:
        """Write ``manifest.json`` and ``SHA256SUMS``, make everything durable, and give the
        bundle its name."""
        listed = dict(self.entries)
        self._add_raw(MANIFEST_NAME, manifest, listed)
        self._add_raw(SUMS_NAME, sums_text(list(listed.values())), None)
        for folder in sorted(
            {p.parent for p in self.temp.rglob("*")} | {self.temp}, key=lambda p: -len(p.parts)
        ):
            fsync_dir(folder)
        os.rename(self.temp, self.final)  # refuses to replace an existing folder of that name
        fsync_dir(self.final.parent)
        return self.final

    def _add_raw(self, name: str, data: bytes, listed: dict[str, FileEntry] | None) -> None:
        with open(self.temp / name, "xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if listed is not None:
            listed[name] = FileEntry(name, hashlib.sha256(data).hexdigest(), len(data))

    def abort(self) -> None:
        """Remove the partial folder (only Labrig's own temp folder; never anything
        else in the target)."""
        shutil.rmtree(self.temp, ignore_errors=True)
