"""A real rig result for the export tests: the virtual rig's four cameras and its force plate,
recorded under the true cameras (stored as the rig's calibration, so the attempt asks for 3-D),
analysed through the queue and published."""

from __future__ import annotations

from dataclasses import dataclass

from labrig.bootstrap import Services, bootstrap
from labrig.capture import create_session
from labrig.capture.rig_world import PLACES
from labrig.capture.rigs import VIRTUAL_RIG_MODE, DeviceSpec, get_rig, rig_device_id
from labrig.pipeline import save_rig_attempt
from labrig.scenarios.rig_truth import store_truth_calibration
from labrig.store import Store
from tests.integration.recording.test_rig_recording import record_frames
from tests.support.analysis_runs import newest_result, run_analysis

RIG = "plate-rig"
FRAMES = 60  # 2 s at 30 fps


@dataclass
class PlateRigResult:
    services: Services
    result_id: str
    attempt_id: str


def record_plate_rig_result(store: Store, frames: int = FRAMES) -> PlateRigResult:
    services = bootstrap(store=store)
    services.capture.add_rig(
        RIG,
        [DeviceSpec(rig_device_id(i), VIRTUAL_RIG_MODE, PLACES[i]) for i in range(4)]
        + [DeviceSpec("virtual:plate-1")],
    )
    store_truth_calibration(store, get_rig(store, RIG), cameras=range(4))
    session = create_session(services.queue, "S-042", "gait", "ana")
    recording = services.capture.start_rig_recording(RIG, session)
    record_frames(recording, frames, timeout_s=frames / 30.0 + 60.0)  # paced in real time
    result = recording.stop()
    attempt_id = save_rig_attempt(services.queue, result)
    run_analysis(services)
    row = newest_result(store, attempt_id)
    assert row.status == "published", row.document
    return PlateRigResult(services, row.id, attempt_id)
