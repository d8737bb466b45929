"""SQLAlchemy 2 models of the catalog.

Portable across SQLite and PostgreSQL: no dialect-specific types or SQL here;
dialect behaviour lives in ``labrig.store.dialects``. Schema changes go
through an Alembic migration in ``migrations/versions``, never ``create_all``.

The modules here do not postpone their annotations (no ``from __future__ import annotations``):
Python evaluates each ``Mapped[...]`` as its class is made, where SQLAlchemy would otherwise parse
and evaluate the text of each of the 244 columns' annotations, 5 ms of every process's start.
"""

from labrig.store.models.access import AuditEntry, RoleAssignment
from labrig.store.models.analysis import (
    AnalysisResultRecord,
    CalibrationRecord,
    ReleaseRecord,
    ResultRevision,
    ResultSignOff,
    RigCalibrationRecord,
)
from labrig.store.models.base import Base, Meta
from labrig.store.models.capture import (
    Attempt,
    AttemptCapture,
    Blob,
    Capture,
    CaptureSegment,
    CaptureSession,
    DeviceRecord,
    ImportedSource,
)
from labrig.store.models.events import DeliveryFailure, InboxEntry, OutboxCursor, OutboxEvent
from labrig.store.models.jobs import Job, JobDependency, JobOutput, ReproducibilityIncident
from labrig.store.models.rigs import RigDeviceRecord, RigRecord, RigRecording
from labrig.store.models.sync import SyncAck, SyncBatch, SyncDestination, SyncFailure, SyncObject

__all__ = [
    "AnalysisResultRecord",
    "Attempt",
    "AttemptCapture",
    "AuditEntry",
    "Base",
    "Blob",
    "CalibrationRecord",
    "Capture",
    "CaptureSegment",
    "CaptureSession",
    "DeliveryFailure",
    "DeviceRecord",
    "ImportedSource",
    "InboxEntry",
    "Job",
    "JobDependency",
    "JobOutput",
    "Meta",
    "OutboxCursor",
    "OutboxEvent",
    "ReleaseRecord",
    "ReproducibilityIncident",
    "ResultRevision",
    "ResultSignOff",
    "RigCalibrationRecord",
    "RigDeviceRecord",
    "RigRecord",
    "RigRecording",
    "RoleAssignment",
    "SyncAck",
    "SyncBatch",
    "SyncDestination",
    "SyncFailure",
    "SyncObject",
]
