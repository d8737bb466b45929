"""Events: the transactional outbox (written in the state change's own transaction), at-least-once
delivery to consumers that remember what they processed, and the hash-chained audit trail.

Modules: ``outbox`` (recording and reading events), ``dispatcher`` (delivery), ``failures``
(deliveries waiting for a retry), ``background``
(a dispatcher's thread, and its listeners), ``cursors``
(where each consumer's deliveries stand, and who delivers them now), ``audit`` (the trail).
"""

from labrig.events.audit import (
    AuditDatesError,
    AuditEntryView,
    AuditQuery,
    AuditTrail,
    chain_head,
    record_audit,
)
from labrig.events.background import DispatcherThread
from labrig.events.cursors import unread_by
from labrig.events.dispatcher import Dispatcher, Outcome
from labrig.events.failures import retry_delay
from labrig.events.outbox import EventRecord, events_after, payload_text, record_event

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
    "events_after",
    "payload_text",
    "record_audit",
    "record_event",
    "retry_delay",
    "unread_by",
]
