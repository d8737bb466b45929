"""PyInstaller hook for pynwb: the NWB core schema (YAML, read from disk at import), its
submodules (registered by name) and its distribution metadata (its version)."""

from PyInstaller.utils.hooks import collect_data_files, collect_submodules, copy_metadata

hiddenimports = collect_submodules("pynwb")
datas = [*collect_data_files("pynwb"), *copy_metadata("pynwb")]
