"""Small printing helpers shared by the sub-commands."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, sort_keys=True, default=str)
    sys.stdout.write("\n")


def print_json_line(data: Any) -> None:
    sys.stdout.write(json.dumps(data, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()
