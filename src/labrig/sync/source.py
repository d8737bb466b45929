"""The local side of a copy: an object opened for reading, checked as it is read.

The reader hashes and counts what the destination reads from it and refuses (raises, inside the
destination's copy loop) as soon as the bytes cannot be the object's — more than its size, fewer at
the end, or the whole of them with another digest. A destination raises out of its copy before its
rename, so a damaged local file leaves nothing at the destination under the object's name.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import BinaryIO

from labrig.errors import LabrigError
from labrig.fsutil import open_regular, shown
from labrig.store import BlobMismatchError, BlobStore
from labrig.store.models import SyncObject
from labrig.sync.faults import SyncSourceMissingError, SyncSourceUnreadableError, described

NEXT = "the other objects are archived without it, and it is tried again at each batch"


class CheckedReader:
    """Reads an object's local bytes for a destination, refusing any that are not the object's.
    Used on the thread that runs the batch."""

    def __init__(self, source: BinaryIO, obj: SyncObject, where: str) -> None:
        self.source, self.obj, self.where = source, obj, where
        self.sha, self.count = hashlib.sha256(), 0

    def read(self, n: int = -1, /) -> bytes:
        try:
            data = self.source.read(n)
        except OSError as exc:
            raise unreadable(self.obj, self.where, exc) from exc
        self.sha.update(data)
        self.count += len(data)
        at_end = not data and n != 0
        if self.count > self.obj.size or (at_end and self.count < self.obj.size):
            raise self._damaged(f"it holds {'more' if data else 'fewer'} bytes than recorded")
        if self.count == self.obj.size and self.sha.hexdigest() != self.obj.sha256:
            raise self._damaged(f"it hashes to {self.sha.hexdigest()[:12]}…")
        return data

    def _damaged(self, how: str) -> LabrigError:
        return BlobMismatchError(
            f"the local copy of {described(self.obj)} ({self.where}) no longer matches its digest "
            f"({how}): it was changed or damaged on disk, and nothing of it was archived. Run "
            f"'labrig verify' and restore the file from a backup or the archive; {NEXT}"
        )


def open_source(obj: SyncObject, media_dir: Path) -> tuple[BinaryIO, str]:
    """The object's local bytes, opened, and where they are (for messages). A missing file is
    :class:`SyncSourceMissingError`, one that cannot be opened :class:`SyncSourceUnreadableError`,
    something other than a file ``NotARegularFileError`` — never a bare ``OSError``."""
    if obj.body is not None:  # a result manifest, kept in the catalog
        return io.BytesIO(obj.body.encode()), "in the catalog"
    path = BlobStore(media_dir).path(obj.sha256, obj.ext)
    try:
        return open_regular(path), shown(path)
    except FileNotFoundError as exc:
        raise SyncSourceMissingError(
            f"the local copy of {described(obj)} is missing ({shown(path)}): it was not "
            f"archived. Run 'labrig verify' and restore the file from a backup or the archive; "
            f"{NEXT}"
        ) from exc
    except OSError as exc:
        raise unreadable(obj, shown(path), exc) from exc


def unreadable(obj: SyncObject, where: str, exc: OSError) -> SyncSourceUnreadableError:
    return SyncSourceUnreadableError(
        f"the local copy of {described(obj)} ({where}) cannot be read "
        f"({exc.strerror or type(exc).__name__}): it was not archived. Check the data folder's "
        f"disk and permissions ('labrig verify' re-reads every file); {NEXT}"
    )
