"""Replacing functions in other packages' modules, and saying what was done.

Each replacement is recorded with the original, made once, and never made over a
replacement someone else installed after ours (``Patches.patch``); the replacement
carries the original in ``ORIGINAL``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ORIGINAL = "__triton_toolchain_original__"
Namespace = dict[str, Any]


class Report:
    """What one application did: settings made (``"knobs.nvidia.ptxas"``, ``"env:CC"``,
    ``"patch:...get_ptxas"`` -> value) and left alone (-> why). (Plain classes here, not
    dataclasses: this is imported on the activation path, where each class costs.)"""

    def __init__(self) -> None:
        self.applied: dict[str, str] = {}
        self.kept: dict[str, str] = {}
        self.notes: list[str] = []


class Patches:
    """The replacements made in this process: ``(namespace, name) -> (original, ours)``."""

    def __init__(self) -> None:
        self.made: dict[tuple[str, str], tuple[object, object]] = {}

    def patch(
        self, where: str, namespace: Namespace, attr: str, make: Callable[[Any], object]
    ) -> bool:
        """Replace ``namespace[attr]`` by ``make(original)`` unless it is absent or someone
        replaced ours since. True when ours is in place."""
        if attr not in namespace:
            return False
        key = (where, attr)
        present = namespace[attr]
        if key in self.made:
            original, ours = self.made[key]
            if present is ours:
                return True
            if present is not original:
                return False
        replacement = make(present)
        self.made[key] = (present, replacement)
        namespace[attr] = replacement
        return True

    def unpatch(self, where: str, namespace: Namespace, attr: str) -> None:
        """Put the original back, if ours is still in place."""
        key = (where, attr)
        if key in self.made:
            original, ours = self.made.pop(key)
            if namespace.get(attr) is ours:
                namespace[attr] = original
