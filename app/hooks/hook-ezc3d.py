"""PyInstaller hook for ezc3d: its SWIG extension loads libezc3d.so from beside itself."""

from PyInstaller.utils.hooks import collect_dynamic_libs

binaries = collect_dynamic_libs("ezc3d")
