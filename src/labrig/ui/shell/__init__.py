"""The window's frame and the plumbing between the core and the widgets: the main window and what it
builds its pages from, the event bridge, background calls (and newest-wins reads), the QThreadPool
job executor and the queue monitor, the window-wide device checks, start-up recovery, the Qt probe
and the refusal box. Nothing here imports a screen: the screens (and :mod:`labrig.ui.screens`, which
lists them) build on it."""
