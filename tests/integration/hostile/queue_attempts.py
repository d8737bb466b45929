"""Attempts waiting for the worker, for the full-disk tests: records COUNT short attempts of the
virtual markers into STORE and queues their analysis (media.qc, tracking, kinematics) without
running it; prints the number of jobs queued."""

from __future__ import annotations

import sys

from sqlalchemy import func, select

from labrig.bootstrap import bootstrap
from labrig.capture import MARKERS_DEVICE_ID, create_session, load_capture
from labrig.pipeline import save_attempt
from labrig.scenarios.demo import record_virtual
from labrig.store.models import Job


def main() -> None:
    store, count = sys.argv[1], int(sys.argv[2])
    services = bootstrap(store)
    try:
        device = services.capture.find(MARKERS_DEVICE_ID)
        session_id = create_session(services.queue, "FULL-001", "virtual markers", "hostile")
        for _ in range(count):
            manifest = record_virtual(services, device, "markers", 2.0, session_id)
            capture_id = load_capture(services.store, manifest).capture_id
            save_attempt(services.queue, session_id, [capture_id])
        with services.store.read() as session:
            print(session.scalar(select(func.count()).select_from(Job)), "jobs queued")
    finally:
        services.close()


if __name__ == "__main__":
    main()
