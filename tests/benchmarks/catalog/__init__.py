"""A lab-scale Labrig catalog for the list, search and filter benchmarks.

``tests/benchmarks/make_catalog.py`` is its command line, and its docstring says what is
generated. The parts, each a layer of the generator :class:`~.plan.Catalog` (one seeded random
stream, so the order of the calls is the catalog):

- :mod:`.lab`: the lab (subjects, protocols, people, rigs, devices), time units, ids;
- :mod:`.rows`: the tables' columns and the records an attempt is generated as;
- :mod:`.outputs`: the synthetic analysis and each stage's output and reasons;
- :mod:`.events`: outbox events and the audit chain, in the order of their times;
- :mod:`.jobs`: the pipeline's jobs, dependencies and outputs;
- :mod:`.results`: results and their revisions;
- :mod:`.recording`: one attempt: its captures, rig recording, and the order of its parts;
- :mod:`.plan`: the sessions over the years, the lab's own rows, chunk by chunk;
- :mod:`.write`: bulk writing, the consumers' cursors, and the report (:func:`~.write.fill`).
"""

from __future__ import annotations

from tests.benchmarks.catalog.lab import DEFAULT_ATTEMPTS, QUICK_ATTEMPTS, sqlite_time, to_us
from tests.benchmarks.catalog.plan import Catalog
from tests.benchmarks.catalog.write import check_schema, count_rows, fill

__all__ = [
    "DEFAULT_ATTEMPTS",
    "QUICK_ATTEMPTS",
    "Catalog",
    "check_schema",
    "count_rows",
    "fill",
    "sqlite_time",
    "to_us",
]
