"""Output nobody reads any more (issue 16): ``labrig captures | head -1`` closes the pipe while
labrig still writes. The command stops quietly with 141, as a shell reports a command that SIGPIPE
ended, instead of a BrokenPipeError traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.cli import ENDS_WITHIN_S, REPO, store_with_a_capture


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    store, _ = store_with_a_capture(tmp_path)
    child = subprocess.Popen(
        [sys.executable, "-m", "labrig", "--store", str(store), "captures", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )
    assert child.stdout is not None
    child.stdout.close()  # the reader is gone before the first line: every write finds no one
    _, errors = child.communicate(timeout=ENDS_WITHIN_S)
    assert "Traceback" not in errors, errors
    assert child.returncode == 141, errors
