"""The interchange formats an export writes from a result's tables (:mod:`labrig.export.tables`):
each module writes one format into a path it is given, and reads nothing else."""
