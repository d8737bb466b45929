"""Sync: committed blobs, capture manifests and published results copied to an archive folder, each
acknowledged only when the destination's copy re-hashes to its SHA-256. Qt-free."""

from labrig.sync.destination import (
    Destination,
    DestinationConfig,
    DestinationUnavailableError,
    FolderDestination,
)
from labrig.sync.index import INDEXED, SYNC_INDEXER, index_for_sync
from labrig.sync.service import BatchReport, DestinationFactory, SyncService
from labrig.sync.status import SyncStatus, sync_status

__all__ = [
    "INDEXED",
    "SYNC_INDEXER",
    "BatchReport",
    "Destination",
    "DestinationConfig",
    "DestinationFactory",
    "DestinationUnavailableError",
    "FolderDestination",
    "SyncService",
    "SyncStatus",
    "index_for_sync",
    "sync_status",
]
