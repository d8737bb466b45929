"""Labrig: a capture-and-analysis workstation for labs."""

__version__: str  # looked up when first read (importlib.metadata is 20 ms of a command's start)


def __getattr__(name: str) -> str:
    if name != "__version__":
        raise AttributeError(f"module 'labrig' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("labrig")
    except PackageNotFoundError:  # running from a source tree that was not installed
        found = "0.0.0+unknown"
    globals()["__version__"] = found
    return found
