"""The Audit screen: the hash-chained audit trail, filtered, and verifying the chain."""
