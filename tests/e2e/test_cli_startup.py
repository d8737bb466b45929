"""What a headless ``labrig`` command loads before it does anything: the worker starts on every
workstation of a lab and several times per drain, so the libraries only some work needs (scipy for
tracking and kinematics, the interchange formats, Qt) load when that work runs, not at start. A
command line loads only the module of the command it names, so a page of results is read without
OpenCV or numpy."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
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
#: screens' media and result reads, and the services built on first use (capture, calibration, a
#: reviewer's revisions, sync batches; each separate worker process pays for what it imports);
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
    "labrig.review.revisions",
    "labrig.review.reprocess",
    "labrig.review.views",
    "labrig.results.views",
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


def test_the_entry_point_imports_without_the_collector_and_runs_the_command_with_it(
    tmp_path: Path,
) -> None:
    """``labrig`` (``labrig.__main__:main``, also ``python -m labrig``) imports the command's
    modules with the cyclic collector off and leaves what they made out of its later passes: the
    command itself runs with the collector on. Nor is the version looked up unless asked for."""
    code = (
        "import atexit, gc, sys\n"
        "seen = {}\n"
        "import labrig.cli.jobs_cmd as jobs\n"  # the worker's command, watched as it starts
        "run_worker = jobs.run_worker\n"
        "def watched(args):\n"
        "    seen['enabled'], seen['frozen'] = gc.isenabled(), gc.get_freeze_count()\n"
        "    return run_worker(args)\n"
        "jobs.run_worker = watched\n"
        "import labrig, labrig.__main__\n"
        "atexit.register(lambda: print('SEEN', seen['enabled'], seen['frozen'],\n"
        "    '__version__' in vars(labrig)))\n"
        f"sys.argv = ['labrig', '--store', {str(tmp_path / 'store')!r}, 'worker', '--drain']\n"
        "sys.exit(labrig.__main__.main())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    assert "Worker stopped: 0 jobs finished" in result.stdout, result.stdout
    enabled, frozen, version_read = result.stdout.rsplit("SEEN ", 1)[1].split()
    assert enabled == "True"
    assert int(frozen) > 50_000  # SQLAlchemy's, the mapped classes', the command's
    assert version_read == "False"
    asked = subprocess.run(
        [sys.executable, "-m", "labrig", "--version"], capture_output=True, text=True, cwd=REPO
    )
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.strip() == f"labrig {importlib.metadata.version('labrig')}"
