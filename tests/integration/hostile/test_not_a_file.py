"""Things that are not files standing where the data folder keeps files (issue 16).

Each case builds its store with the real commands (an imported video), then puts a FIFO or a folder
where a media blob or the database file belongs, and runs the commands that read it. Every command
must end, in time, with a typed answer (a ``LABRIG_*`` code, no traceback) and leave what was
committed unchanged. A FIFO is the sharp case: opened the ordinary way, a read waits for a writer
that never comes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import assert_typed, labrig, store_with_a_capture

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


@pytest.mark.parametrize("replacement", ["fifo", "folder"])
def test_a_blob_replaced_by_something_that_is_not_a_file_is_reported_not_waited_on(
    tmp_path: Path, replacement: str
) -> None:
    store, blob = store_with_a_capture(tmp_path)
    blob.unlink()
    if replacement == "fifo":
        os.mkfifo(blob)
    else:
        blob.mkdir()

    verified = labrig(store, "verify", "--json")

    assert_typed(verified)
    report = json.loads(verified.stdout)
    assert verified.returncode == 1 and report["ok"] is False
    [problem] = [p for p in report["problems"] if blob.name[:64] in json.dumps(p)]
    said = {"fifo": "is a FIFO, not a file", "folder": "is a folder, not a file"}[replacement]
    assert said in json.dumps(problem) and "restore the file" in json.dumps(problem)
    # the catalog still lists the capture as committed: nothing was changed
    listed = labrig(store, "captures", "--json").stdout.splitlines()
    assert [json.loads(line)["state"] for line in listed] == ["committed"]


def test_a_folder_named_like_the_database_is_refused_by_every_command_and_nothing_is_created(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    (store / "labrig.db").mkdir(parents=True)
    before = sorted(p.name for p in store.iterdir())

    for command in (["captures"], ["verify", "--json"], ["events"], ["jobs"]):
        refused = labrig(store, *command)
        assert_typed(refused)
        assert refused.returncode == 2, (command, refused.stdout, refused.stderr)
        assert "LABRIG_NOT_A_REGULAR_FILE" in refused.stderr and "is a folder" in refused.stderr

    assert sorted(p.name for p in store.iterdir()) == before
