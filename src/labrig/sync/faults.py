"""Why one object could not be archived, each with a stable code and what to do.

An object fails alone: the batch records its failure (``sync_failures``, with a backoff) and goes on
with the rest. The batch report holds each failure's code beside its message (``failed_codes``);
what is kept and shown reads ``CODE: message`` (:func:`said`) — the CLI's text,
``sync_failures.last_error``, a batch's error in ``sync_batches``, and so ``labrig sync status``,
the Settings page and the status bar, where :func:`code_of` reads the code back.

Local damage (``LABRIG_SYNC_SOURCE_MISSING``, ``LABRIG_SYNC_SOURCE_UNREADABLE``,
``LABRIG_BLOB_MISMATCH``, ``LABRIG_NOT_A_REGULAR_FILE``) is found while the object is read, before
its copy at the destination is renamed into place, so the archive never holds damaged bytes under
an object's name. A destination that cannot take the copy (``LABRIG_SYNC_DESTINATION_FULL``,
``LABRIG_SYNC_COPY_FAILED``) keeps nothing of it either.
"""

from __future__ import annotations

import re

from labrig.errors import LabrigError
from labrig.fsutil import no_room
from labrig.store.models import SyncObject
from labrig.sync.destination import DestinationConfig

#: what each kind of object is called in a message
CONTENT_WORDS = {
    "media": "media segment",
    "timestamps": "timestamps file",
    "capture-manifest": "committed capture manifest",
    "result": "result manifest",
}
_CODE = re.compile(r"^(LABRIG_[A-Z0-9_]+): ")


class SyncSourceMissingError(LabrigError):
    """The local file of an object is gone from the media store."""

    code = "LABRIG_SYNC_SOURCE_MISSING"


class SyncSourceUnreadableError(LabrigError):
    """The local file of an object is there but cannot be read (permissions, an I/O error)."""

    code = "LABRIG_SYNC_SOURCE_UNREADABLE"


class SyncDestinationFullError(LabrigError):
    """The destination has no room (or no quota) left for an object's copy."""

    code = "LABRIG_SYNC_DESTINATION_FULL"


class SyncCopyFailedError(LabrigError):
    """Writing or reading back an object's copy at the destination failed for another reason."""

    code = "LABRIG_SYNC_COPY_FAILED"


def described(obj: SyncObject) -> str:
    """An object as a message names it: what it is, its digest, the capture or result it is of."""
    owner = "result" if obj.content == "result" else "capture"
    word = CONTENT_WORDS.get(obj.content, obj.content)
    return f"{word} {obj.sha256[:12]}… of {owner} {obj.ref_id}"


def said(code: str | None, message: str) -> str:
    """A failure as it is kept and shown: ``CODE: message`` (a cancel has no code)."""
    return message if code is None else f"{code}: {message}"


def code_of(text: str | None) -> str | None:
    """The code a kept failure starts with (None for none, as text kept by an older version)."""
    found = _CODE.match(text or "")
    return found.group(1) if found else None


def at_destination(exc: OSError, config: DestinationConfig, what: str, then: str) -> LabrigError:
    """The typed failure of a write or read-back at the destination: ``what`` was being stored,
    ``then`` says what happens to it next."""
    where = f"the sync destination '{config.name}' ({config.location})"
    if no_room(exc):
        return SyncDestinationFullError(
            f"{where} is full: {what} did not fit, and nothing of it was left there. Free space "
            f"on it (or have its quota raised), then run 'labrig sync --once'; {then}"
        )
    reason = exc.strerror or type(exc).__name__
    return SyncCopyFailedError(
        f"{where} could not store {what} ({reason}); nothing of it was left there. Check that "
        f"the share is mounted and writable, then run 'labrig sync --once'; {then}"
    )
