"""Start-up recovery on a store with nothing to recover: it reads, through small indexes, and
writes nothing (the window waits for it before it paints)."""

from __future__ import annotations

from pathlib import Path

from labrig.bootstrap import bootstrap
from labrig.capture import create_session
from labrig.capture.rigs import DeviceSpec
from labrig.capture.sources import Mode
from labrig.pipeline import save_rig_attempt
from labrig.store import Store
from tests.integration.recording.test_rig_recording import record_frames
from tests.support.plans import plans, statements

WRITES = ("INSERT", "UPDATE", "DELETE")


def test_recovery_with_nothing_to_do_reads_two_indexes_and_writes_nothing(
    store: Store, tmp_path: Path
) -> None:
    services = bootstrap(store=store)
    services.capture.add_rig(
        "bench", [DeviceSpec(f"virtual:rig-{n}", Mode(640, 360, 30.0, "any")) for n in (1, 2)]
    )
    session = create_session(services.queue, "REC-1", "gait", "ana")
    recording = services.capture.start_rig_recording("bench", session)
    record_frames(recording, 10)
    save_rig_attempt(services.queue, recording.stop())  # saved: nothing is left to recover

    with statements(store) as sent:
        report = services.recover()

    assert report.items == []
    assert not [sql for sql, _ in sent if sql.lstrip().upper().startswith(WRITES)]
    # the unsaved rig recordings from their partial index, not a read of every recording
    [rigs] = plans(store, sent, "rig_recordings")
    assert "ix_rig_recordings_unsaved" in rigs, rigs
    # the provisional captures from the index of captures by state
    [captures] = plans(store, sent, "captures")
    assert "ix_captures_state" in captures, captures
