"""The Qt front end: the only package that imports PySide6 or pyqtgraph.

Widgets receive their collaborators in ``__init__`` and hear about core events
through the one :class:`~labrig.ui.shell.bridge.EventBridge`; the core never imports
anything from here.
"""
