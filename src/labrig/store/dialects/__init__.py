"""Dialect-specific behaviour, one module per database: nothing else may speak a dialect."""
