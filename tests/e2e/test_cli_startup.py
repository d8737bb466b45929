"""What a headless ``labrig`` command loads before it does anything: the worker starts on every
workstation of a lab and several times per drain, so the libraries only some work needs (scipy for
tracking and kinematics, the interchange formats, Qt) load when that work runs, not at start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: top-level packages a worker with nothing to do must not have imported
HEAVY = ("scipy", "pynwb", "hdmf", "h5py", "ezc3d", "ndx_pose", "PySide6", "pyqtgraph")


def test_a_worker_with_nothing_to_do_loads_no_scipy_no_formats_and_no_qt(tmp_path: Path) -> None:
    code = (
        "import atexit, sys\n"
        f"heavy = {HEAVY!r}\n"
        "atexit.register(lambda: print('LOADED', sorted({m.split('.')[0] for m in sys.modules} "
        "& set(heavy))))\n"
        "from labrig.cli import main\n"
        f"sys.exit(main(['--store', {str(tmp_path / 'store')!r}, 'worker', '--drain']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    assert "Worker stopped: 0 jobs finished" in result.stdout
    assert "LOADED []" in result.stdout, result.stdout
