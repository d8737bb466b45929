"""A package's names imported at first use (PEP 562), so importing one light module of a package
does not load its heavy ones: the command line starts fast."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_attributes(package: str, defined_in: Mapping[str, str]) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``package``: each name of ``defined_in`` is read from the
    package's module it maps to (and kept in the package, so it is looked up once)."""

    def __getattr__(name: str) -> object:
        module = defined_in.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
