"""PyInstaller hook for ndx-pose: its namespace and extension spec (YAML, loaded from disk when
it is imported) and its distribution metadata."""

from PyInstaller.utils.hooks import collect_data_files, copy_metadata

datas = [*collect_data_files("ndx_pose"), *copy_metadata("ndx-pose")]
