"""PyInstaller hook for hdmf (under pynwb): the hdmf-common schema (YAML, read from disk), its
submodules (registered by name) and its distribution metadata."""

from PyInstaller.utils.hooks import collect_data_files, collect_submodules, copy_metadata

hiddenimports = collect_submodules("hdmf")
datas = [*collect_data_files("hdmf"), *copy_metadata("hdmf")]
