"""Shared test set-up. Tests never skip: a missing tool is a failure that says what to
install (the README's test command installs everything)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def require_tool(name: str, package: str) -> str:
    """The absolute path of ``name`` on PATH, or a failure naming the package to install."""
    found = shutil.which(name)
    assert found, f"{name} is not installed; install {package} (see README: the test command)"
    return found
