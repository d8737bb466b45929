"""The analysis pipeline: what runs as jobs over an attempt's committed media. Media quality
control, marker tracking and kinematics as pure computations, the stages that wrap them for the job
queue, and saving an attempt with the default pipeline requested. Qt-free.

Modules: ``media_qc``, ``tracking``, ``kinematics`` (the computations), ``stages`` (the registered
stages and their settings), ``attempts`` (saving an attempt, recorded or imported, the default
pipeline), ``rig_attempts`` (a rig recording saved as one attempt, with rig.sync requested),
``rig_imports`` (a rig's videos from separate devices, synchronised after the fact),
``reanalysis`` (an attempt analysed again under the calibrations current now).
"""

from typing import TYPE_CHECKING

from labrig.lazy import lazy_attributes

if TYPE_CHECKING:
    from labrig.pipeline.attempts import (
        SavedRecording,
        attempt_pipeline,
        import_attempt,
        save_attempt,
        stop_and_save,
    )
    from labrig.pipeline.reanalysis import NothingToReanalyseError, reanalyse, reanalyses_of
    from labrig.pipeline.rig_attempts import (
        RigNotSavedError,
        RigRecovered,
        rig_pipeline,
        save_interrupted_rigs,
        save_rig_attempt,
        stop_and_save_rig,
    )
    from labrig.pipeline.rig_imports import RigImport, import_rig
    from labrig.pipeline.stages import analysis_stages

#: each name and the module of this package that defines it, imported at first use
_FROM = {
    "SavedRecording": "attempts",
    "attempt_pipeline": "attempts",
    "import_attempt": "attempts",
    "save_attempt": "attempts",
    "stop_and_save": "attempts",
    "NothingToReanalyseError": "reanalysis",
    "reanalyse": "reanalysis",
    "reanalyses_of": "reanalysis",
    "RigNotSavedError": "rig_attempts",
    "RigRecovered": "rig_attempts",
    "rig_pipeline": "rig_attempts",
    "save_interrupted_rigs": "rig_attempts",
    "save_rig_attempt": "rig_attempts",
    "stop_and_save_rig": "rig_attempts",
    "RigImport": "rig_imports",
    "import_rig": "rig_imports",
    "analysis_stages": "stages",
}
__getattr__ = lazy_attributes(__name__, _FROM)

__all__ = [
    "NothingToReanalyseError",
    "RigImport",
    "RigNotSavedError",
    "RigRecovered",
    "SavedRecording",
    "analysis_stages",
    "attempt_pipeline",
    "import_attempt",
    "import_rig",
    "reanalyse",
    "reanalyses_of",
    "rig_pipeline",
    "save_attempt",
    "save_interrupted_rigs",
    "save_rig_attempt",
    "stop_and_save",
    "stop_and_save_rig",
]
