"""Domain rules, pure Python: no Qt, no SQLAlchemy, no store (checked by import-linter). The event
catalog and job state machine of the contract, idempotency keys and canonical JSON, ids, storage
pressure levels, roles, revision rules and the audit chain.

Each module is a namespace of its own rules, imported by module: ``from labrig.domain.jobs
import JobState``.
"""

__all__ = ["audit", "events", "idempotency", "ids", "jobs", "revisions", "roles", "storage"]
