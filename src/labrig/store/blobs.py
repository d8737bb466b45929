"""The content-addressed media store: every blob lives at media/<aa>/<sha256>.<ext>.

A blob enters by rename from the same volume (never copied half-way), the
directory is fsynced, and its row is written by the caller's transaction: the
database commit is the commit point. A blob is never overwritten or deleted.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from labrig.errors import LabrigError
from labrig.fsutil import NotARegularFileError, fsync_dir, sha256_file


class BlobMismatchError(LabrigError):
    """A file's bytes do not match the digest they were recorded under."""

    code = "LABRIG_BLOB_MISMATCH"


class BlobNameError(LabrigError):
    """A digest or extension from the catalog or a manifest that is not one Labrig writes: used as
    a file name it could point outside the media store."""

    code = "LABRIG_BLOB_NAME_INVALID"


_DIGEST = re.compile(r"^[0-9a-f]{64}$")
_EXT = re.compile(r"^(\.[a-z0-9]{1,8})?$")


@dataclass(frozen=True)
class BlobStore:
    root: Path  # the media folder of the data root

    def path(self, sha256: str, ext: str) -> Path:
        """Where the blob ``sha256`` + ``ext`` lives; refused (:class:`BlobNameError`) for a digest
        or extension that could name anything but a file inside the media store."""
        if not _DIGEST.match(sha256) or not _EXT.match(ext):
            raise BlobNameError(
                f"the catalog names a stored file {sha256[:80]!r}{ext[:16]!r}, which is not a "
                "digest Labrig writes (changed outside Labrig); it is not opened. Run 'labrig "
                "verify' and restore labrig.db from a backup"
            )
        return self.root / sha256[:2] / f"{sha256}{ext}"

    def put(self, source: Path, sha256: str, ext: str) -> Path:
        """Move ``source`` (already fsynced, hashed as ``sha256``) into the store; idempotent."""
        target = self.path(sha256, ext)
        if target.exists():
            if sha256_file(target)[0] != sha256:
                raise BlobMismatchError(
                    f"{target} does not match its name; run 'labrig verify' and restore it"
                )
            source.unlink()
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        fsync_dir(target.parent)
        fsync_dir(source.parent)
        return target

    def withdraw(self, sha256: str, ext: str) -> None:
        """Remove a blob this process put moments ago and that no row can reference: the
        manifest of a commit refused at its last step (it names a capture id of its own). The one
        exception to "never deleted"; nothing else may call it."""
        self.path(sha256, ext).unlink(missing_ok=True)
        fsync_dir(self.path(sha256, ext).parent)

    def verify(self, sha256: str, ext: str) -> str | None:
        """None when the blob is present and whole, else what is wrong with it."""
        try:
            target = self.path(sha256, ext)
        except BlobNameError as exc:
            return exc.message
        if not target.exists():
            return f"missing: {target}"
        try:
            actual, _ = sha256_file(target)
        except NotARegularFileError as exc:
            return f"not a file: {exc.message}"
        return None if actual == sha256 else f"digest mismatch: {target} hashes to {actual}"
