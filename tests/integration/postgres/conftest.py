"""The worker-children fixture of the queue_procs suite, for the PostgreSQL-only
multi-process tests."""

from __future__ import annotations

from tests.integration.queue_procs.conftest import workers

__all__ = ["workers"]
