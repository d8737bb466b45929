"""How long a failed job waits before its next attempt."""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class RetryPolicy:
    """Exponential backoff with full jitter: a delay drawn uniformly from [0,
    min(cap, base·2^(n-1))].

    Full jitter keeps many jobs that failed together (a device unplugged) from
    retrying together.
    """

    base_seconds: float = 2.0
    cap_seconds: float = 300.0
    rng: random.Random = field(default_factory=random.Random)

    def ceiling(self, attempt: int) -> float:
        return float(min(self.cap_seconds, self.base_seconds * 2 ** max(attempt - 1, 0)))

    def delay(self, attempt: int) -> float:
        return self.rng.uniform(0.0, self.ceiling(attempt))
