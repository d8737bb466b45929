"""The content-addressed media store: every blob lives at media/<aa>/<sha256>.<ext>.

A blob enters by rename from the same volume (never copied half-way), the
directory is fsynced, and its row is written by the caller's transaction: the
database commit is the commit point. A blob is never overwritten or deleted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from labrig.errors import LabrigError
from labrig.fsutil import NotARegularFileError, fsync_dir, sha256_file


class BlobMismatchError(LabrigError):
    """A file's bytes do not match the digest they were recorded under."""

    code = "LABRIG_BLOB_MISMATCH"


@dataclass(frozen=True)
class BlobStore:
    root: Path  # the media folder of the data root

    def path(self, sha256: str, ext: str) -> Path:
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
        target = self.path(sha256, ext)
        if not target.exists():
            return f"missing: {target}"
        try:
            actual, _ = sha256_file(target)
        except NotARegularFileError as exc:
            return f"not a file: {exc.message}"
        return None if actual == sha256 else f"digest mismatch: {target} hashes to {actual}"
