"""The virtual rig's ground truth for the reconstruction tests (labrig.scenarios.rig_truth)."""

from labrig.scenarios.rig_truth import errors_mm, store_truth_calibration, true_paths

__all__ = ["errors_mm", "store_truth_calibration", "true_paths"]
