"""The Calibration screen: stored calibrations with their verdicts, one in detail (errors, corners,
coverage, the frame of each view), and calibrating from a recording of the board."""
