"""What a headless ``labrig`` command loads before it does anything: the worker starts on every
workstation of a lab and several times per drain, so the libraries only some work needs (scipy for
tracking and kinematics, the interchange formats, Qt) load when that work runs, not at start. A
command line loads only the module of the command it names, so a page of results is read without
OpenCV or numpy."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

from labrig.cli import COMMAND_MODULES, build_parser
from tests.support.results import make_results

REPO = Path(__file__).resolve().parents[2]
#: top-level packages a worker with nothing to do must not have imported
HEAVY = ("scipy", "pynwb", "hdmf", "h5py", "ezc3d", "ndx_pose", "PySide6", "pyqtgraph")


def _run_loading(argv: list[str], heavy: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """Run ``labrig argv`` in a fresh interpreter that says, at exit, which of ``heavy`` it
    imported."""
    code = (
        "import atexit, sys\n"
        f"heavy = {heavy!r}\n"
        "atexit.register(lambda: print('LOADED', sorted(({m.split('.')[0] for m in sys.modules} "
        "| set(sys.modules)) & set(heavy))))\n"
        "from labrig.cli import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO
    )


#: … nor the parts of Labrig a worker never runs: the reference check of a release, export, the
#: screens' media and result reads, and the services built on first use (capture, calibration);
#: nor, with no job to run, what the stages compute (numpy, OpenCV, the calibrations) and what a
#: reviewer's corrections are computed with
NOT_A_WORKERS = (
    "numpy",
    "cv2",
    "labrig.pipeline.stage_runs",
    "labrig.pipeline.rig_runs",
    "labrig.review.effective",
    "labrig.calibration.camera",
    "labrig.scenarios",
    "labrig.export",
    "labrig.review.player",
    "labrig.pipeline.reanalysis",
    "labrig.capture.service",
    "labrig.calibration.service",
)


def test_a_worker_with_nothing_to_do_loads_no_numpy_no_formats_and_no_qt(tmp_path: Path) -> None:
    result = _run_loading(
        ["--store", str(tmp_path / "store"), "worker", "--drain"], (*HEAVY, *NOT_A_WORKERS)
    )
    assert result.returncode == 0, result.stderr
    assert "Worker stopped: 0 jobs finished" in result.stdout
    assert "LOADED []" in result.stdout, result.stdout


def test_a_page_of_results_is_listed_without_opencv_or_numpy(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_results(store)
    result = _run_loading(
        ["--store", str(store), "review", "list", "--limit", "5"], (*HEAVY, "cv2", "numpy")
    )
    assert result.returncode == 0, result.stderr
    assert "Results 1–2 of 2." in result.stdout, result.stdout
    assert "LOADED []" in result.stdout, result.stdout


def test_each_command_is_found_in_the_module_that_adds_it() -> None:
    """The table the command line loads one module from names every command of every module, and
    only those; the parser of a command line that names one has it with all its verbs."""
    added: dict[str, str] = {}
    for name in dict.fromkeys(COMMAND_MODULES.values()):
        commands = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"labrig.cli.{name}").add_parser(commands)
        added |= dict.fromkeys(commands.choices, name)
    assert added == COMMAND_MODULES
    for command in COMMAND_MODULES:
        parser = build_parser(["--store", "x", command])
        (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        assert set(sub.choices) == {c for c, m in added.items() if m == added[command]}
    every = build_parser(["--help"])
    (sub,) = [a for a in every._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub.choices) == list(COMMAND_MODULES)
