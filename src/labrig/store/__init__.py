"""The durable catalog: the data folder, the database (SQLite in WAL or PostgreSQL) with its Alembic
migrations, the content-addressed media store, and the dialect modules for raw hot-path SQL.

The ORM rows are imported from :mod:`labrig.store.models` by module (they are the schema, not an
API); raw SQL helpers from :mod:`labrig.store.dialects`.
"""

from labrig.store.blobs import BlobMismatchError, BlobStore
from labrig.store.database import EVENTS_IN_TRANSACTION, RawTransaction, Store, open_store
from labrig.store.opening import check_openable
from labrig.store.paths import DB_ENV_VAR
from labrig.store.types import utcnow

__all__ = [
    "DB_ENV_VAR",
    "EVENTS_IN_TRANSACTION",
    "BlobMismatchError",
    "BlobStore",
    "RawTransaction",
    "Store",
    "check_openable",
    "open_store",
    "utcnow",
]
