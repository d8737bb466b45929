"""Labrig: a capture-and-analysis workstation for labs."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("labrig")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"
