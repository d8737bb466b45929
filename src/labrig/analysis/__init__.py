"""Calibration and analysis: gated metric output, reproducible stages, published results (Qt-free)."""
