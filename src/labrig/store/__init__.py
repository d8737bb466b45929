"""The durable catalog: SQLAlchemy models, migrations and the data root."""

from labrig.store.database import Store, open_store

__all__ = ["Store", "open_store"]
