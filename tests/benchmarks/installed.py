"""Benchmarked processes started as an installed Labrig starts: from compiled bytecode.

An installed Labrig (the installer's copy, or a wheel), like the peers from theirs, imports its
modules from compiled bytecode. A development checkout run with ``PYTHONDONTWRITEBYTECODE`` (set
on this machine) would recompile Labrig's own modules in every process a benchmark starts: 0.1 s
of each ``labrig`` command's start that no installation pays. :func:`bytecode_cache` lets them
keep it, in a temporary folder, the source tree left untouched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def temp_dir(prefix: str, *, sync: bool = False) -> Iterator[Path]:
    """A temporary folder, removed afterwards (``sync``: and its removal written back, so the
    next round does not wait for this one's write-back and discards)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if sync:
            os.sync()


@contextmanager
def bytecode_cache() -> Iterator[Path]:
    """Let the processes started inside keep compiled bytecode (``PYTHONPYCACHEPREFIX``, a
    temporary folder of their own); the first start of each program fills it, so measure after a
    warm-up run."""
    saved = {k: os.environ.get(k) for k in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
    with temp_dir("bench-pycache-") as folder:
        os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        try:
            yield folder
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
