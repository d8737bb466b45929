"""Events: the transactional outbox (written in the state change's own transaction), at-least-once
delivery to consumers that remember what they processed, and the hash-chained audit trail.

Modules: ``outbox`` (recording events), ``dispatcher`` (delivery and listeners),
``audit`` (the trail).
"""

from labrig.events.audit import (
    AuditDatesError,
    AuditEntryView,
    AuditQuery,
    AuditTrail,
    chain_head,
    record_audit,
)
from labrig.events.dispatcher import (
    Dispatcher,
    DispatcherThread,
    Outcome,
    consumer_cursor,
    events_after,
    retry_delay,
)
from labrig.events.outbox import EventRecord, payload_text, record_event

__all__ = [
    "AuditDatesError",
    "AuditEntryView",
    "AuditQuery",
    "AuditTrail",
    "Dispatcher",
    "DispatcherThread",
    "EventRecord",
    "Outcome",
    "chain_head",
    "consumer_cursor",
    "events_after",
    "payload_text",
    "record_audit",
    "record_event",
    "retry_delay",
]
