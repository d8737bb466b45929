"""Time-ordered ids (RFC 9562 version 7) for jobs and outbox events."""

from __future__ import annotations

import itertools
import time
import uuid

from labrig.domain.ids import random_id, time_ordered_id


def test_ids_are_version_7_uuids_in_the_usual_text_form() -> None:
    made = time_ordered_id()
    parsed = uuid.UUID(made)
    assert str(parsed) == made and len(made) == 36
    assert parsed.version == 7 and parsed.variant == uuid.RFC_4122


def test_ids_start_with_the_unix_milliseconds_they_were_made_at() -> None:
    before = time.time_ns() // 1_000_000
    made = uuid.UUID(time_ordered_id())
    after = time.time_ns() // 1_000_000
    assert before <= made.int >> 80 <= after


def test_ids_made_in_later_milliseconds_sort_after_earlier_ones_and_never_repeat() -> None:
    batches = []
    for _ in range(5):
        batches.append([time_ordered_id() for _ in range(2000)])
        time.sleep(0.002)
    for earlier, later in itertools.pairwise(batches):
        assert max(earlier) < min(later)
    every = [i for batch in batches for i in batch]
    assert len(set(every)) == len(every)


def test_random_ids_are_version_4_uuids_that_never_repeat() -> None:
    made = [random_id() for _ in range(20000)]
    assert len(set(made)) == len(made)
    for text in made[:200]:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 4 and parsed.variant == uuid.RFC_4122
    # the 122 random bits are all used: every hex digit outside the fixed ones takes many values
    digits = [text.replace("-", "") for text in made]
    for position in (0, 7, 13, 17, 31):
        assert len({d[position] for d in digits}) == 16
