"""Devices and capture: verified sources, crash-safe recording, committed media (Qt-free)."""
