"""Devices and capture: discovery and the compatibility inventory, verification, crash-safe
recording into segments with timestamp sidecars, the provisional manifest and the commit that hashes
the media, recovery after a crash, importing and watch folders, sessions and attempts, and reading
committed media back. Qt-free.

Modules: ``devices``, ``discovery``, ``inventory``, ``verify`` (what is plugged in and whether it
may record); ``sources``, ``opencv_source``, ``virtual`` (frame sources); ``recorder``, ``sink``,
``manifest``, ``commit``, ``recovery`` (recording; ``stream_recorder`` and ``recording_state``
what every recording shares); ``importer``, ``watch`` (media made elsewhere);
``integrity`` (``labrig verify``); ``sessions`` (sessions and attempts); ``media`` (committed media
read back; ``frame_access``, any frame by its stored index, for the player); ``rigs``,
``rig_recorder``, ``rig_sync`` (rigs, recording one, its sync measured); ``rig_world``,
``rig_camera`` (the virtual rig); ``samples``, ``sample_sink``, ``instrument_recorder``,
``usb_instrument``, ``virtual_instrument``, ``verify_instrument`` (instruments: sample streams
recorded in a rig); ``verdicts`` (a device's verdict); ``service`` (the front ends' entry).
"""

from typing import TYPE_CHECKING

from labrig.lazy import lazy_attributes

if TYPE_CHECKING:
    from labrig.capture.devices import DeviceInfo, DeviceKind
    from labrig.capture.discovery import DiscoveryReport, DiscoverySettings, discover_virtual
    from labrig.capture.frame_access import FrameOutOfRangeError, FrameReader, FrameUnreadableError
    from labrig.capture.importer import import_media
    from labrig.capture.integrity import Selection, verify_store
    from labrig.capture.inventory import ANY_FORMAT, FRAME_KINDS, load_inventory
    from labrig.capture.media import (
        CaptureMedia,
        CaptureMissingError,
        FileNameNotUtf8Error,
        iter_frames,
        iter_luma,
        load_capture,
        open_video,
    )
    from labrig.capture.recorder import Recorder, RecorderState, RecorderStatus, status_json
    from labrig.capture.recovery import RecoveryReport, recover
    from labrig.capture.service import CaptureService, parse_mode
    from labrig.capture.sessions import PipelineStep, attempt_names, create_attempt, create_session
    from labrig.capture.sink import FrameClock, now_ns, read_timestamps
    from labrig.capture.sources import FrameSource, Image, Mode
    from labrig.capture.verify import DeviceRefusedError, Verification
    from labrig.capture.virtual import (
        DEFAULT_MODE,
        MARKERS_DEVICE_ID,
        SCENE_LABELS,
        SCENE_PURPOSE,
        SceneName,
        SceneSwitch,
        VirtualCamera,
    )
    from labrig.capture.watch import WatchFolderIngestor

#: each name and the module of this package that defines it, imported at first use
_FROM = {
    "DeviceInfo": "devices",
    "DeviceKind": "devices",
    "DiscoveryReport": "discovery",
    "DiscoverySettings": "discovery",
    "discover_virtual": "discovery",
    "FrameOutOfRangeError": "frame_access",
    "FrameReader": "frame_access",
    "FrameUnreadableError": "frame_access",
    "import_media": "importer",
    "Selection": "integrity",
    "verify_store": "integrity",
    "ANY_FORMAT": "inventory",
    "FRAME_KINDS": "inventory",
    "load_inventory": "inventory",
    "CaptureMedia": "media",
    "CaptureMissingError": "media",
    "FileNameNotUtf8Error": "media",
    "iter_frames": "media",
    "iter_luma": "media",
    "load_capture": "media",
    "open_video": "media",
    "Recorder": "recorder",
    "RecorderState": "recorder",
    "RecorderStatus": "recorder",
    "status_json": "recorder",
    "RecoveryReport": "recovery",
    "recover": "recovery",
    "CaptureService": "service",
    "parse_mode": "service",
    "PipelineStep": "sessions",
    "attempt_names": "sessions",
    "create_attempt": "sessions",
    "create_session": "sessions",
    "FrameClock": "sink",
    "now_ns": "sink",
    "read_timestamps": "sink",
    "FrameSource": "sources",
    "Image": "sources",
    "Mode": "sources",
    "DeviceRefusedError": "verify",
    "Verification": "verify",
    "DEFAULT_MODE": "virtual",
    "MARKERS_DEVICE_ID": "virtual",
    "SCENE_LABELS": "virtual",
    "SCENE_PURPOSE": "virtual",
    "SceneName": "virtual",
    "SceneSwitch": "virtual",
    "VirtualCamera": "virtual",
    "WatchFolderIngestor": "watch",
}
__getattr__ = lazy_attributes(__name__, _FROM)

__all__ = [
    "ANY_FORMAT",
    "DEFAULT_MODE",
    "FRAME_KINDS",
    "MARKERS_DEVICE_ID",
    "SCENE_LABELS",
    "SCENE_PURPOSE",
    "CaptureMedia",
    "CaptureMissingError",
    "CaptureService",
    "DeviceInfo",
    "DeviceKind",
    "DeviceRefusedError",
    "DiscoveryReport",
    "DiscoverySettings",
    "FileNameNotUtf8Error",
    "FrameClock",
    "FrameOutOfRangeError",
    "FrameReader",
    "FrameSource",
    "FrameUnreadableError",
    "Image",
    "Mode",
    "PipelineStep",
    "Recorder",
    "RecorderState",
    "RecorderStatus",
    "RecoveryReport",
    "SceneName",
    "SceneSwitch",
    "Selection",
    "Verification",
    "VirtualCamera",
    "WatchFolderIngestor",
    "attempt_names",
    "create_attempt",
    "create_session",
    "discover_virtual",
    "import_media",
    "iter_frames",
    "iter_luma",
    "load_capture",
    "load_inventory",
    "now_ns",
    "open_video",
    "parse_mode",
    "read_timestamps",
    "recover",
    "status_json",
    "verify_store",
]
