"""Widgets and models shared by several screens: the read-only rows table, the list-and-detail page
base, the progress-bar column, the device picker, the result view and its plots."""
