"""The transactional outbox and at-least-once delivery to idempotent consumers."""

from labrig.events.outbox import EventRecord, record_event

__all__ = ["EventRecord", "record_event"]
