"""Who may do what, and the hash-chained audit trail."""

from datetime import datetime

from sqlalchemy import Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from labrig.store.models.base import Base
from labrig.store.types import UTCDateTime


class RoleAssignment(Base):
    """A user's role from this assignment on (the latest per user counts; ``role`` null =
    removed). Append-only."""

    __tablename__ = "role_assignments"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(128), index=True)  # the login, lower-case
    role: Mapped[str | None] = mapped_column(String(16))  # technician, reviewer, admin, or null
    assigned_by: Mapped[str] = mapped_column(String(128))
    reason: Mapped[str] = mapped_column(Text)
    assigned_at: Mapped[datetime] = mapped_column(UTCDateTime())


class AuditEntry(Base):
    """One link of the hash-chained audit trail (see ``labrig.domain.audit``).
    Append-only (triggers).

    Every column is text as hashed, so verifying never re-parses a value; ``seq``
    is set by the writer (previous + 1), never by a database sequence, so a gap
    always means a missing entry.
    """

    __tablename__ = "audit_entries"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    recorded_at: Mapped[str] = mapped_column(String(40))  # ISO-8601 UTC, microseconds
    actor: Mapped[str] = mapped_column(String(128))  # the login of who did it
    host: Mapped[str] = mapped_column(String(255))  # the workstation it was done on
    # e.g. review.revise, roles.set, release.activate
    action: Mapped[str] = mapped_column(String(64))
    object_type: Mapped[str] = mapped_column(String(32))  # result, user, release
    object_id: Mapped[str] = mapped_column(String(255))
    reason: Mapped[str] = mapped_column(Text)  # why, in the actor's words
    change: Mapped[str] = mapped_column(Text)  # canonical JSON of what changed
    change_digest: Mapped[str] = mapped_column(String(64))  # SHA-256 of ``change``
    prev_hash: Mapped[str] = mapped_column(String(64))
    entry_hash: Mapped[str] = mapped_column(String(64))
