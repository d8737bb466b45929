"""The idempotency key of seed 000.

    idempotency_key = H(stage_id + ordered_input_digests + model_manifest_digest
                        + config_digest + schema_version)

H is SHA-256. "+" is made unambiguous by hashing the canonical JSON array of the
five parts (so ``("ab", "c")`` and ``("a", "bc")`` cannot collide); input digests
keep the order the stage declared them in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical_json(value: Any) -> bytes:
    """The one byte encoding Labrig hashes: sorted keys, no spaces, UTF-8, no NaN (one encoder, made
    once: ``json.dumps`` with these options makes a new one at every call)."""
    return _CANONICAL.encode(value).encode()


def config_digest(config: Any) -> str:
    return sha256_hex(canonical_json(config))


def idempotency_key(
    stage_id: str,
    input_digests: Sequence[str],
    model_manifest_digest: str,
    config_digest: str,
    schema_version: int,
) -> str:
    parts = [stage_id, list(input_digests), model_manifest_digest, config_digest, schema_version]
    return sha256_hex(canonical_json(parts))
