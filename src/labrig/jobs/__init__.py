"""The durable job queue: Qt-free core shared by the GUI's QThreadPool and `labrig worker`."""
