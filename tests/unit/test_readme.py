"""README keeps exactly two set-up commands, and CI runs the same test command."""

from __future__ import annotations

import re

from tests.contract import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def _setup_commands() -> list[str]:
    section = README.split("## Set up on a fresh Debian/Ubuntu machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^    (\S.*)$", section, flags=re.M)


def test_readme_has_exactly_two_setup_commands() -> None:
    assert _setup_commands() == ["./setup.sh app", "./setup.sh test"]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    commands = [
        line.strip() for line in ci.splitlines() if line.strip() and not line.startswith("#")
    ]
    assert _setup_commands()[1] in commands


def test_setup_script_is_executable() -> None:
    assert (REPO / "setup.sh").stat().st_mode & 0o111
    assert (REPO / ".ci" / "run").stat().st_mode & 0o111
