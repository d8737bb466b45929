"""Typed errors with stable codes.

Every refusal Labrig makes is a :class:`LabrigError` whose ``code`` never changes
between releases (scripts and the UI match on it) and whose message says, in
words a technician understands, what went wrong and what to do next.
"""

from __future__ import annotations


class LabrigError(Exception):
    """Base of every Labrig refusal: a stable ``code`` plus an actionable message."""

    code = "LABRIG_ERROR"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class InvalidTransitionError(LabrigError):
    """A job state change that seed 000 does not allow."""

    code = "LABRIG_INVALID_TRANSITION"


class TerminalStateError(LabrigError):
    """Any change attempted on a job that is already in a terminal state."""

    code = "LABRIG_TERMINAL_STATE"


class InvalidEventPayloadError(LabrigError):
    """A catalogued event whose payload does not match its schema."""

    code = "LABRIG_INVALID_EVENT_PAYLOAD"


class StoreError(LabrigError):
    """The data root or its database cannot be used; nothing was modified."""

    code = "LABRIG_STORE_ERROR"


class StoreUnwritableError(StoreError):
    code = "LABRIG_STORE_UNWRITABLE"


class DatabaseCorruptError(StoreError):
    code = "LABRIG_DB_CORRUPT"


class ForeignDatabaseError(StoreError):
    code = "LABRIG_DB_FOREIGN"


class DatabaseUnreachableError(StoreError):
    """The catalog server cannot be reached (address, port, credentials, or it is down)."""

    code = "LABRIG_DB_UNREACHABLE"


class UnsupportedDatabaseError(StoreError):
    code = "LABRIG_DB_UNSUPPORTED"


class NetworkFilesystemError(StoreError):
    """An SQLite catalog on a network filesystem: its locks do not work there, and files corrupt."""

    code = "LABRIG_SQLITE_ON_NETWORK_FS"


class SchemaTooNewError(StoreError):
    code = "LABRIG_SCHEMA_TOO_NEW"


class StoreBusyError(StoreError):
    """Another process has been opening (migrating) the catalog for longer than an opening waits."""

    code = "LABRIG_STORE_BUSY"


class CatalogMissingError(StoreError):
    """The catalog is missing or empty while the media folder holds committed captures: opening
    it as a new store would hide them and record beside them (``labrig recover --adopt``)."""

    code = "LABRIG_CATALOG_MISSING"


class CatalogDamagedError(StoreError):
    """SQLite's integrity check found damaged pages in the catalog (recorded beside it, in
    ``labrig.db.damaged``): every write is refused until the catalog is repaired and
    ``labrig doctor`` passes; reading still works."""

    code = "LABRIG_CATALOG_DAMAGED"


class ReadOnlySessionError(StoreError):
    """A write attempted through a session opened for reading."""

    code = "LABRIG_READ_ONLY_SESSION"


class QtUnavailableError(LabrigError):
    """The window cannot open: Qt's platform plugin is missing or cannot start here."""

    code = "LABRIG_QT_UNAVAILABLE"


class UsageError(LabrigError):
    """A command-line invocation that cannot be carried out as typed."""

    code = "LABRIG_USAGE"


class StageConfigError(LabrigError):
    """A job's configuration that its stage does not accept
    (unknown key, wrong type, out of range)."""

    code = "LABRIG_STAGE_CONFIG"


class UnknownJobError(LabrigError):
    code = "LABRIG_UNKNOWN_JOB"


class UnknownStageError(LabrigError):
    code = "LABRIG_UNKNOWN_STAGE"


class LeaseLostError(LabrigError):
    """The worker's lease was taken over or expired: it must stop and discard its result."""

    code = "LABRIG_LEASE_LOST"


class StageFailure(LabrigError):
    """Raised by a stage to end its run with a typed failure."""

    code = "LABRIG_STAGE_FAILED"


class TransientStageError(StageFailure):
    """Worth retrying (a device busy, a file still being written): RetryWaiting with backoff."""

    code = "LABRIG_STAGE_TRANSIENT"


class PermanentStageError(StageFailure):
    """Retrying cannot help (bad input, unsupported media): PermanentFailure with this code."""

    code = "LABRIG_STAGE_PERMANENT"


class QualityBlockedError(StageFailure):
    """A quality gate forbids publication: BlockedByQuality until new evidence or configuration."""

    code = "LABRIG_QUALITY_BLOCKED"

    def __init__(self, reasons: list[str], *, code: str | None = None) -> None:
        super().__init__("; ".join(reasons) or "blocked by a quality gate", code=code)
        self.reasons = list(reasons)


class JobCancelledError(LabrigError):
    """Raised inside a stage by ``ctx.check_cancelled()`` once a cancel was requested."""

    code = "LABRIG_CANCELLED"
